import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IdempotencyError, Workflow } from '@svc/sdk';
import { eventually, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { expectEachCompletedOnce } from './support/completions';

/**
 * Two replicas of the hub, the Workflow API and the worker (processes from their builds, on one pair of databases
 * and one Redis), and a client that alternates between the two API replicas by their own URLs: what a caller sees
 * does not depend on which replica answers, and periodic work runs once however many workers run it (decision 92).
 */
jest.setTimeout(90_000);

type Stack = RunStack<Database>;
let s: Stack;
let replicas: [string, string];

/** What the local receiver was sent. */
interface Hit {
  at: number;
  headers: IncomingHttpHeaders;
  body: { type?: string; data?: { invocation_id?: string } };
}
const hits: Hit[] = [];
let receiver: Server;
let receiverUrl = '';

/** An OpenAI-compatible model that always suggests the first contract offered. */
let model: Server;
let modelUrl = '';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => resolve(raw));
  });
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    void readBody(req).then((raw) => {
      hits.push({ at: Date.now(), headers: req.headers, body: JSON.parse(raw) as Hit['body'] });
      res.writeHead(204).end();
    });
  });
  model = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const body = JSON.parse(raw) as { model: string; messages: { role: string; content: string }[] };
      const offered = JSON.parse(body.messages.find((m) => m.role === 'user')?.content ?? '{}') as {
        contracts: { contract_id: string }[];
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'cmpl-1',
          object: 'chat.completion',
          model: body.model,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: JSON.stringify({
                  contract_id: offered.contracts[0]?.contract_id ?? null,
                  reason: 'It is about reports.',
                }),
              },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
        }),
      );
    });
  });
  [receiverUrl, modelUrl] = await Promise.all([listen(receiver), listen(model)]);
  s = await startRunStack({
    replicas: 2,
    database: (url) => createDatabase(url, { poolSize: 2 }),
    env: {
      WORKFLOW_STAGE_STALL_SECONDS: '20',
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      // One sealing key for every replica: a subscription made on one is signed by any worker.
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      // No re-check of the compiled contracts within the suite: only the contracts notice can reach a replica.
      WORKFLOW_CONTRACT_CHECK_MS: '3600000',
    },
  });
  replicas = s.replicas.api.map((r) => r.url) as [string, string];
  await s.addAgent(['shared']);
}, 90_000);

afterAll(async () => {
  await s?.close();
  for (const server of [receiver, model]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}, 60_000);

const workflowAt = (baseUrl: string, apiKey = s.apiKey) =>
  new Workflow({ baseUrl, apiKey, projectId: s.project.id, maxRetries: 0 });

async function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; code?: string; data?: unknown }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as { code?: string; data?: unknown };
  return { status: res.status, code: json.code, data: json.data };
}

const owner = () => ({ authorization: `Bearer ${s.ownerToken}` });
const project = () => `/api/v1/projects/${s.project.id}/workflow`;

describe('contracts', () => {
  test('when a contract is created through one replica, then the other resolves intents against it at once (the contracts notice, decision 109)', async () => {
    const intent = 'noticed contract report';
    // Both replicas compile the project's contracts now, without the new one.
    for (const url of replicas)
      expect((await workflowAt(url).contracts.resolve({ intent })).matched).toBe(false);
    // Created through the balancer (one replica); seedRoute returns once every replica matches it, and with the
    // re-check off only the notice can tell the other replica.
    const route = await s.seedRoute({
      intent,
      stages: [{ key: 'one', title: 'One', required_capabilities: ['shared'] }],
    });
    for (const url of replicas)
      expect((await workflowAt(url).contracts.resolve({ intent: route.intent })).matched).toBe(true);
  });
});

describe('idempotency', () => {
  test('when one Idempotency-Key reaches replica A then replica B, then both answer the same invocation, and a changed body the same conflict', async () => {
    const route = await s.seedRoute({
      intent: 'idempotent report',
      stages: [{ key: 'one', title: 'One', required_capabilities: ['shared'] }],
    });
    const [a, b] = replicas.map((url) => workflowAt(url)) as [Workflow, Workflow];
    const idempotencyKey = randomUUID();
    const first = await a.invocations.create({ intent: route.intent }, { idempotencyKey });
    expect(first.replayed).toBe(false);
    const second = await b.invocations.create({ intent: route.intent }, { idempotencyKey });
    expect(second).toEqual({ invocation: first.invocation, replayed: true });

    for (const client of [a, b]) {
      const conflict = await client.invocations
        .create({ intent: `${route.intent} changed` }, { idempotencyKey })
        .catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(IdempotencyError);
      expect(conflict).toMatchObject({ status: 409, code: 'idempotency_conflict' });
      expect((conflict as IdempotencyError).problem?.invocation_id).toBe(first.invocation.invocation_id);
    }

    // A new key sent to both replicas at once: one invocation, the other answer a replay of it.
    const raced = randomUUID();
    const both = await Promise.all(
      [a, b].map((c) => c.invocations.create({ intent: route.intent }, { idempotencyKey: raced })),
    );
    expect(both[0]!.invocation.invocation_id).toBe(both[1]!.invocation.invocation_id);
    expect(both.map((r) => r.replayed).sort()).toEqual([false, true]);
    expect(
      await s.database.prisma.invocation.count({
        where: { idempotencyKey: { in: [idempotencyKey, raced] } },
      }),
    ).toBe(2);
  });
});

describe('revocation', () => {
  test('when a member is demoted, then removed, on the hub, then both Workflow API replicas refuse them although each cached the membership', async () => {
    const ws = `/api/v1/workspaces/${s.workspace.slug}`;
    const email = `approver-${randomBytes(3).toString('hex')}@example.test`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const added = await call(s.hubUrl, 'POST', `${ws}/members`, owner(), { email, role: 'admin', password });
    expect(added.status).toBe(201);
    const participantId = (added.data as { participant: { id: string } }).participant.id;
    const session = await call(s.hubUrl, 'POST', '/api/v1/auth/login', {}, { email, password });
    const token = (session.data as { token: string }).token;
    const decide = (base: string) =>
      call(
        base,
        'POST',
        `${project()}/invocations/inv_unknown0000/approval`,
        { authorization: `Bearer ${token}` },
        {
          decision: 'approve',
        },
      );
    // An admin passes the role check on each replica and reaches the (missing) invocation; both cache the role.
    for (const base of [...replicas, ...replicas]) {
      expect(await decide(base)).toMatchObject({ status: 404, code: 'invocation_not_found' });
    }
    // Caches keep a membership 10 s: a refusal within 3 s on both is the hub's notice reaching each replica.
    expect(
      (await call(s.hubUrl, 'PATCH', `${ws}/members/${participantId}`, owner(), { role: 'viewer' })).status,
    ).toBe(200);
    await eventually(
      async () => (await Promise.all(replicas.map(decide))).every((r) => r.status === 403),
      3_000,
      'the demoted member refused by both replicas',
      { intervalMs: 50 },
    );
    expect((await call(s.hubUrl, 'DELETE', `${ws}/members/${participantId}`, owner())).status).toBe(204);
    await eventually(
      async () => (await Promise.all(replicas.map(decide))).every((r) => r.code === 'project_not_found'),
      3_000,
      'the removed member refused by both replicas',
      { intervalMs: 50 },
    );
  });

  test('when an agent is evicted on the hub, then both Workflow API replicas refuse its token', async () => {
    const agent = await s.addAgent(['revoked'], { start: false });
    const stages = (base: string) =>
      call(base, 'GET', '/api/v1/agents/me/workflow-stages', { authorization: `Bearer ${agent.token}` });
    for (const base of [...replicas, ...replicas]) expect((await stages(base)).status).toBe(200);
    expect((await call(s.hubUrl, 'POST', `/api/v1/agents/${agent.id}/evict`, owner())).status).toBe(200);
    // Standing is trusted 30 s without a notice: a refusal within 3 s on both is the notice.
    await eventually(
      async () => (await Promise.all(replicas.map(stages))).every((r) => r.status === 401),
      3_000,
      'the evicted agent refused by both replicas',
      { intervalMs: 50 },
    );
  });

  test('when a project is archived on the hub, then both replicas refuse new invocations in it although each cached the project', async () => {
    const created = await call(s.hubUrl, 'POST', `/api/v1/workspaces/${s.workspace.slug}/projects`, owner(), {
      code: `ARC${randomBytes(2).toString('hex').toUpperCase()}`,
      name: 'Archived soon',
    });
    expect(created.status).toBe(201);
    const projectId = (created.data as { id: string }).id;
    const invoke = (base: string) =>
      call(
        base,
        'POST',
        `/api/v1/projects/${projectId}/workflow/invocations`,
        { 'x-api-key': s.apiKey, 'idempotency-key': randomUUID() },
        { intent: 'anything at all' },
      );
    // Each replica reads the project once and keeps it 10 s.
    for (const base of replicas) expect((await invoke(base)).status).toBe(201);
    expect((await call(s.hubUrl, 'POST', `/api/v1/projects/${projectId}/archive`, owner())).status).toBe(200);
    // Within 3 s on both: the hub's notice, not the 10 s cache running out.
    await eventually(
      async () => (await Promise.all(replicas.map(invoke))).every((r) => r.code === 'project_archived'),
      3_000,
      'the archived project refused by both replicas',
      { intervalMs: 50 },
    );
  });
});

describe('the assist budget', () => {
  test('when resolves needing assistance alternate between replicas, then the project ceiling is reached once, and both report the same usage', async () => {
    await s.seedRoute({ intent: 'budgeted weekly digest' });
    const providers = await call(
      s.hubUrl,
      'PUT',
      `/api/v1/workspaces/${s.workspace.slug}/provider-credentials/openai`,
      owner(),
      { secret: `sk-fake${randomBytes(16).toString('hex')}` },
    );
    expect([200, 201]).toContain(providers.status);
    const settings = await call(replicas[0], 'PATCH', `${project()}/assistance`, owner(), {
      enabled: true,
      provider: 'openai',
      model: 'gpt-4.1',
      base_url: `${modelUrl}/v1`,
      timeout_ms: 5000,
      budget: { calls_per_day: 3 },
    });
    expect(settings.status).toBe(200);
    try {
      const key = { 'x-api-key': s.apiKey };
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call(replicas[i % 2]!, 'POST', `${project()}/resolve-intent`, key, {
            intent: `something nobody phrased ${i}`,
          }),
        ),
      );
      expect(answers.every((r) => r.status === 200)).toBe(true);
      const outcomes = answers.map(
        (r) =>
          (r.data as { explanation: { assistance?: { outcome: string } } }).explanation.assistance?.outcome,
      );
      expect(outcomes.filter((o) => o === 'budget_exhausted')).toHaveLength(7);
      for (const base of replicas) {
        const budget = await call(base, 'GET', `${project()}/assistance/budget`, key);
        expect(budget.data).toMatchObject({ exhausted: true, day: { calls_used: 3, calls_limit: 3 } });
      }
    } finally {
      await call(replicas[1], 'PATCH', `${project()}/assistance`, owner(), { enabled: false });
    }
  });
});

describe('periodic work with two workers', () => {
  let subscriptionId = '';
  const completed = (ids: string[]) =>
    hits.filter(
      (h) => h.body.type === 'invocation.completed' && ids.includes(h.body.data?.invocation_id ?? ''),
    );

  test('when runs queue behind a run limit of one, then each is admitted, run, completed and delivered exactly once', async () => {
    const route = await s.seedRoute({
      intent: 'limited report',
      stages: [{ key: 'one', title: 'One', required_capabilities: ['shared'] }],
    });
    const subscribed = await call(replicas[0], 'POST', `${project()}/delivery-subscriptions`, owner(), {
      url: `${receiverUrl}/hook`,
      events: ['invocation.completed'],
    });
    expect(subscribed.status).toBe(201);
    subscriptionId = (subscribed.data as { subscription_id: string }).subscription_id;
    const limited = await call(replicas[1], 'PATCH', `${project()}/run-limits`, owner(), {
      project_max_runs_in_progress: 1,
    });
    expect(limited.status).toBe(200);
    const ids: string[] = [];
    // The run limit across replicas, read from committed rows: each sample is one snapshot, so it never sees two
    // runs in progress unless two were admitted at once (start and end times are taken by different processes
    // before their locks, so comparing them would be off by the wait for a lock).
    let sampling = true;
    let mostInProgress = 0;
    const sampler = (async () => {
      while (sampling) {
        const open = await s.database.prisma.workflowRun.count({
          where: { invocationId: { in: [...ids] }, endedAt: null },
        });
        mostInProgress = Math.max(mostInProgress, open);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    try {
      for (let i = 0; i < 6; i += 1) {
        const client = workflowAt(replicas[i % 2]!);
        const { invocation } = await client.invocations.create({ intent: route.intent });
        await client.invocations.launch(invocation.invocation_id);
        ids.push(invocation.invocation_id);
      }
      await expectEachCompletedOnce(workflowAt(s.workflowUrl), s.database, ids, 60_000);
      await eventually(async () => completed(ids).length >= ids.length, 20_000, 'every completion delivered');
      // Once each: one arrival, one delivery row with one attempt, every outbox row processed once.
      const arrived = completed(ids);
      expect(arrived.map((h) => h.body.data?.invocation_id).sort()).toEqual([...ids].sort());
      expect(new Set(arrived.map((h) => h.headers['webhook-id'])).size).toBe(ids.length);
      const rows = await s.database.prisma.delivery.findMany({ where: { subscriptionId } });
      expect(rows).toHaveLength(ids.length);
      expect(rows.every((r) => r.status === 'succeeded' && r.attempts === 1)).toBe(true);
      const outbox = await s.database.prisma.outboxEntry.findMany({ where: { invocationId: { in: ids } } });
      expect(outbox.every((o) => o.processedAt !== null)).toBe(true);
      sampling = false;
      await sampler;
      // The run limit held across replicas: no two of these runs were in progress at once.
      expect(mostInProgress).toBe(1);
    } finally {
      sampling = false;
      await sampler;
      await call(replicas[0], 'PATCH', `${project()}/run-limits`, owner(), {
        project_max_runs_in_progress: null,
      });
    }
  });

  test('when deliveries are replayed under a rate limit, then the two workers share one pace', async () => {
    expect(subscriptionId).not.toBe('');
    const patched = await call(
      replicas[1],
      'PATCH',
      `${project()}/delivery-subscriptions/${subscriptionId}`,
      owner(),
      {
        rate_limit_per_second: 2,
      },
    );
    expect(patched.status).toBe(200);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const before = hits.length;
    const replayAskedAt = Date.now();
    const replayed = await call(replicas[0], 'POST', `${project()}/deliveries/replay`, owner(), {
      since,
      subscription_id: subscriptionId,
      statuses: ['succeeded'],
    });
    expect(replayed.status).toBe(202);
    const count = (replayed.data as { replayed: number }).replayed;
    expect(count).toBe(6);
    await eventually(async () => hits.length - before >= count, 30_000, 'every replay sent');
    const arrivals = hits
      .slice(before)
      .map((h) => h.at)
      .sort((x, y) => x - y);
    expect(arrivals).toHaveLength(count);
    // One pace for the subscription, whichever worker sends: Redis hands out slots 500 ms apart from the first,
    // so the sixth cannot arrive before 2.5 s after the replay was asked (a load only makes it later). Paced per
    // worker, three each at two a second, the last would be sent 1 s after the replay.
    expect(arrivals[count - 1]! - replayAskedAt).toBeGreaterThanOrEqual(2_450);
  });
});
