// The mixed load of bench/service-memory.mjs: for each process a few loops, each taking the next request of its
// list in turn, until the deadline; plus a sign-in and a real spawn every 5 s.
import { randomBytes } from 'node:crypto';
import { sleep } from '../harness/stack.mjs';
import { call, count } from './requests.mjs';

export const INTENT = 'Please write the weekly report for the memory bench';

function loops(stack, { concurrency, interrupted }) {
  const { hub, session, wf, relay, router } = stack;
  const auth = () => ({ authorization: `Bearer ${session.token}` });
  const hubKey = { 'x-api-key': hub.keys.hub };
  let sequence = 0;
  const next = () => `${process.pid}-${(sequence += 1)}-${randomBytes(3).toString('hex')}`;

  const hubRequests = [
    () => call('hub', 'GET workspaces (key)', `${hub.url}/api/v1/workspaces`, { headers: hubKey }),
    () => call('hub', 'GET me', `${hub.url}/api/v1/me`, { headers: auth() }),
    () =>
      call('hub', 'GET projects', `${hub.url}/api/v1/workspaces/${hub.slug}/projects`, { headers: auth() }),
    () => call('hub', 'GET members', `${hub.url}/api/v1/workspaces/${hub.slug}/members`, { headers: auth() }),
    () => call('hub', 'GET agent', `${hub.url}/api/v1/agents/${hub.agentId}`, { headers: auth() }),
    () => call('hub', 'GET contract', `${hub.url}/api/v1/contract`, { headers: hubKey }),
    () => call('hub', 'GET jwks', `${hub.url}/.well-known/jwks.json`),
    () => call('hub', 'GET openapi', `${hub.url}/openapi.json`),
    async () => {
      const created = await call('hub', 'POST api key', `${hub.url}/api/v1/workspaces/${hub.slug}/api-keys`, {
        method: 'POST',
        headers: auth(),
        body: { name: `memory ${next()}`, scopes: ['workspaces:read'] },
        ok: [201],
      });
      const id = created?.data?.id ?? created?.data?.api_key?.id;
      if (id) {
        await call('hub', 'DELETE api key', `${hub.url}/api/v1/workspaces/${hub.slug}/api-keys/${id}`, {
          method: 'DELETE',
          headers: auth(),
          ok: [200, 204],
        });
      }
    },
  ];

  const resolveBody = { intent: INTENT };
  const workflowRequests = [
    () =>
      call('workflow-api', 'POST resolve', `${wf.base}/resolve-intent`, {
        method: 'POST',
        headers: wf.headers,
        body: resolveBody,
      }),
    () =>
      call('workflow-api', 'POST preflight', `${wf.base}/preflight`, {
        method: 'POST',
        headers: wf.headers,
        body: resolveBody,
      }),
    () => call('workflow-api', 'GET contracts', `${wf.base}/contracts`, { headers: wf.headers }),
    () =>
      call('workflow-api', 'GET contract', `${wf.base}/contracts/${wf.contractId}`, { headers: wf.headers }),
    () => call('workflow-api', 'GET invocations', `${wf.base}/invocations`, { headers: wf.headers }),
    () => call('workflow-api', 'GET deliveries', `${wf.base}/deliveries`, { headers: wf.headers }),
    () => call('workflow-api', 'GET openapi', `${wf.url}/openapi.json`),
  ];

  /** One run: invoke → launch → poll until completed (the worker, the hub handoffs and the agent work it). */
  async function oneRun(deadline) {
    const invoked = await call('workflow-api', 'POST invoke', `${wf.base}/invocations`, {
      method: 'POST',
      headers: { ...wf.headers, 'idempotency-key': `memory-${next()}` },
      body: { intent: INTENT },
      ok: [201],
    });
    const id = invoked?.data?.invocation_id;
    if (!id) return;
    const launched = await call('workflow-api', 'POST launch', `${wf.base}/invocations/${id}/launch`, {
      method: 'POST',
      headers: wf.headers,
      ok: [200, 202],
    });
    if (!launched) return;
    const until = Math.max(deadline, Date.now()) + 30_000;
    for (;;) {
      const view = await call('workflow-api', 'GET invocation', `${wf.base}/invocations/${id}`, {
        headers: wf.headers,
      });
      const state = view?.data?.state;
      if (state === 'completed') return;
      if (state === 'failed' || state === 'cancelled' || view === undefined || Date.now() > until) {
        count('workflow-api', `run ended ${state ?? 'without an answer'}`, false, id);
        return;
      }
      await sleep(50);
    }
  }

  const routerRequests = [
    () =>
      call('console-router', 'GET agent health', `${router.agentRoute}/global/health`, { headers: auth() }),
    () =>
      call('console-router', 'POST chat message', `${router.agentRoute}/chat/messages`, {
        method: 'POST',
        headers: auth(),
        body: { text: `status ${next()}` },
        ok: [202],
      }),
    () =>
      call('console-router', 'GET chat messages', `${router.agentRoute}/chat/messages`, { headers: auth() }),
    () => call('console-router', 'no credential', `${router.agentRoute}/global/health`, { ok: [401] }),
    () =>
      call('console-router', 'unknown agent', `${router.url}/${hub.slug}/agents/agt_unknown/global/health`, {
        headers: auth(),
        ok: [404],
      }),
    () => call('console-router', 'GET status', `${router.url}/status`),
  ];

  const spawnBody = () => ({
    spawn_id: `spw_${randomBytes(8).toString('hex')}`,
    agent: { name: `mem-${next()}` },
  });
  const relayToken = { 'x-svc-relay-token': relay.token };
  const relayRequests = [
    () => call('relay', 'GET status', `${relay.url}/status`),
    // 503 is the readiness answer when the hub does not answer within the relay's 2 s (a loaded machine).
    () => call('relay', 'GET readyz', `${relay.url}/readyz`, { ok: [200, 503] }),
    () =>
      call('relay', 'spawn without token', `${relay.url}/spawn`, {
        method: 'POST',
        body: spawnBody(),
        ok: [401],
      }),
    () =>
      call('relay', 'spawn wrong token', `${relay.url}/spawn`, {
        method: 'POST',
        headers: { 'x-svc-relay-token': `${relay.token}0` },
        body: spawnBody(),
        ok: [403],
      }),
    () =>
      call('relay', 'spawn unknown command', `${relay.url}/spawn`, {
        method: 'POST',
        headers: relayToken,
        body: { ...spawnBody(), command_key: 'other' },
        ok: [422],
      }),
    () =>
      call('relay', 'spawn bad body', `${relay.url}/spawn`, {
        method: 'POST',
        headers: relayToken,
        body: { agent: 42 },
        ok: [400],
      }),
  ];

  /** A loop that takes the requests of `list` in turn, starting at `offset`, until the deadline. */
  const cycle = (list, offset) => async (deadline) => {
    for (let i = offset; Date.now() < deadline && !interrupted.aborted; i += 1) await list[i % list.length]();
  };
  /** A loop that runs `step` every `everyMs` until the deadline. */
  const paced = (step, everyMs) => async (deadline) => {
    while (Date.now() < deadline && !interrupted.aborted) {
      const t0 = Date.now();
      await step();
      await sleep(Math.max(0, Math.min(everyMs - (Date.now() - t0), deadline - Date.now())));
    }
  };
  const signIn = async () => {
    const answer = await call('hub', 'POST login', `${hub.url}/api/v1/auth/login`, {
      method: 'POST',
      body: { email: hub.email, password: hub.password },
    });
    const token = answer?.data?.token ?? answer?.token;
    if (token) session.token = token;
  };
  // A real spawn: the relay runs the built svc CLI, which refuses it on this host (no profile); any problem
  // answer of the contract is expected, a 5xx other than the relay's own spawn failure is not.
  const realSpawn = () =>
    call('relay', 'spawn through svc', `${relay.url}/spawn`, {
      method: 'POST',
      headers: relayToken,
      body: spawnBody(),
      ok: [200, 202, 400, 409, 422, 502, 503],
    });

  const all = [];
  for (let i = 0; i < concurrency; i += 1) {
    all.push(cycle(hubRequests, i * 2), cycle(workflowRequests, i * 2), cycle(routerRequests, i));
    all.push(cycle(relayRequests, i), async (deadline) => {
      while (Date.now() < deadline && !interrupted.aborted) await oneRun(deadline);
    });
  }
  all.push(paced(signIn, 5_000), paced(realSpawn, 5_000));
  return all;
}

/**
 * `loadMs` of mixed load on every process of `stack` at once, `concurrency` loops per process; resolves to the
 * deliveries the receiver got meanwhile.
 */
export async function runLoad(stack, { loadMs, concurrency, interrupted }) {
  const deadline = Date.now() + loadMs;
  const delivered = stack.receiver.received();
  await Promise.all(loops(stack, { concurrency, interrupted }).map((loop) => loop(deadline)));
  return { deliveries: stack.receiver.received() - delivered };
}
