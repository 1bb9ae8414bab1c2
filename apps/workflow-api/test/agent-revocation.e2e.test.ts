import { randomBytes } from 'node:crypto';
import {
  createHubDatabase,
  createHubWorkspace,
  createWorkflowDatabase,
  eventually,
  newServiceToken,
  registerLiveRuntimeHost,
  registerStartedAgent,
  sleep,
  startHub,
  startWorkflowApi,
  testRedisUrl,
  uniqueQueuePrefix,
  workflowEnv,
} from '@svc/testing';
import type { HubOwner, LiveRuntimeHost, NodeProcess, RunningHub, TestDatabase } from '@svc/testing';

/**
 * Agents and participants losing access while their JWTs are still valid (decision 60), from outside: the built
 * hub and two built Workflow APIs as processes, over the real Redis. `listening` shares the hub's notice prefix,
 * so it hears evictions and membership changes within a second; `deaf` listens on another prefix (every notice
 * lost, as when Redis drops them) and falls back to asking the hub (agents, every 2 s here) or to its
 * membership cache (10 s).
 */

jest.setTimeout(90_000);

const REDIS_URL = testRedisUrl();
const RECHECK_MS = 2_000;
const MEMBER_CACHE_MS = 10_000;

let hubDb: TestDatabase;
const wfDbs: TestDatabase[] = [];
let hub: RunningHub;
let listening: { url: string; api: NodeProcess };
let deaf: { url: string; api: NodeProcess };
let owner: HubOwner;
let host: LiveRuntimeHost;
let project: { id: string; code: string };

const STAGES = '/api/v1/agents/me/workflow-stages';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function call(
  base: string,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  body?: unknown,
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { code?: string; data?: unknown };
  return { status: res.status, code: json.code, data: json.data };
}

const hubCall = (path: string, method = 'GET', body?: unknown, token = owner.token) =>
  call(hub.url, path, bearer(token), method, body);

async function startedAgent(): Promise<{ id: string; token: string }> {
  return registerStartedAgent(owner, {
    name: `agent-${randomBytes(3).toString('hex')}`,
    hostId: host.id,
    projectCode: project.code,
    capabilities: ['review'],
  });
}

async function startWorkflow(queuePrefix: string, serviceToken: string, env: Record<string, string> = {}) {
  const db = await createWorkflowDatabase();
  wfDbs.push(db);
  const wf = await workflowEnv({
    databaseUrl: db.url,
    redisUrl: REDIS_URL,
    queuePrefix,
    hubUrl: hub.url,
    serviceToken,
    env,
  });
  return { url: wf.url, api: await startWorkflowApi(wf) };
}

beforeAll(async () => {
  const serviceToken = newServiceToken();
  const prefix = uniqueQueuePrefix('svcr');
  hubDb = await createHubDatabase();
  hub = await startHub({
    databaseUrl: hubDb.url,
    serviceToken,
    env: { HUB_REDIS_URL: REDIS_URL, HUB_REDIS_PREFIX: prefix, HUB_MANAGED_PROVIDERS: 'local' },
  });
  listening = await startWorkflow(prefix, serviceToken);
  deaf = await startWorkflow(uniqueQueuePrefix('svcd'), serviceToken, {
    WORKFLOW_AGENT_RECHECK_MS: String(RECHECK_MS),
  });
  owner = await createHubWorkspace({
    hubUrl: hub.url,
    databaseUrl: hubDb.url,
    slug: 'evictions',
    email: 'owner@evictions.test',
  });
  project = await owner.createProject('EVI');
  host = await registerLiveRuntimeHost(owner, 'host-evictions');
});

afterAll(async () => {
  host?.stop();
  await Promise.all([listening?.api.stop(), deaf?.api.stop()]);
  await hub?.process.stop();
  await Promise.all([hubDb?.drop(), ...wfDbs.map((db) => db.drop())]);
});

describe('an evicted agent', () => {
  test('when it is evicted, then every token issued to it before is refused by the Workflow API within 1 s, as by the hub', async () => {
    const agent = await startedAgent();
    // A second token, as a running agent has after refreshing: both were issued before the eviction.
    const refreshed = await hubCall('/api/v1/agents/me/token', 'POST', undefined, agent.token);
    expect(refreshed.status).toBe(200);
    const tokens = [agent.token, (refreshed.data as { agent_token: string }).agent_token];
    for (const token of tokens) {
      expect((await call(listening.url, STAGES, bearer(token))).status).toBe(200);
      expect((await call(deaf.url, STAGES, bearer(token))).status).toBe(200);
    }

    expect((await hubCall(`/api/v1/agents/${agent.id}/evict`, 'POST')).status).toBe(200);
    const started = Date.now();
    await eventually(
      async () => (await call(listening.url, STAGES, bearer(tokens[0]!))).status === 401,
      1_000,
      'the evicted token refused by the listening service',
      { intervalMs: 25 },
    );
    const took = Date.now() - started;
    expect(took).toBeLessThan(1_000);
    for (const token of tokens) {
      expect(await call(listening.url, STAGES, bearer(token))).toMatchObject({
        status: 401,
        code: 'credential_invalid',
      });
      expect(await hubCall('/api/v1/agents/me', 'GET', undefined, token)).toMatchObject({
        status: 401,
        code: 'credential_invalid',
      });
    }
  });

  test('when the notice is lost, then the Workflow API refuses the token once it asks the hub again (within its recheck time)', async () => {
    const agent = await startedAgent();
    expect((await call(deaf.url, STAGES, bearer(agent.token))).status).toBe(200);
    const evictedAt = Date.now();
    expect((await hubCall(`/api/v1/agents/${agent.id}/evict`, 'POST')).status).toBe(200);
    await eventually(
      async () => (await call(deaf.url, STAGES, bearer(agent.token))).status === 401,
      RECHECK_MS + 1_000,
      'the evicted token refused by the deaf service',
      { intervalMs: 25 },
    );
    expect(Date.now() - evictedAt).toBeLessThan(RECHECK_MS + 1_000);
    expect(await call(deaf.url, STAGES, bearer(agent.token))).toMatchObject({
      status: 401,
      code: 'credential_invalid',
    });
  });

  test('when it is evicted and deleted, then its token stays refused by both Workflow APIs (deny set, and the hub no longer knows it)', async () => {
    const agent = await startedAgent();
    expect((await call(listening.url, STAGES, bearer(agent.token))).status).toBe(200);
    expect((await call(deaf.url, STAGES, bearer(agent.token))).status).toBe(200);
    expect((await hubCall(`/api/v1/agents/${agent.id}/evict`, 'POST')).status).toBe(200);
    expect((await hubCall(`/api/v1/agents/${agent.id}`, 'DELETE')).status).toBe(204);
    expect((await hubCall(`/api/v1/agents/${agent.id}`)).status).toBe(404);
    await eventually(
      async () => (await call(listening.url, STAGES, bearer(agent.token))).status === 401,
      1_000,
      'the deleted agent refused by the listening service',
      { intervalMs: 25 },
    );
    await eventually(
      async () => (await call(deaf.url, STAGES, bearer(agent.token))).status === 401,
      RECHECK_MS + 1_000,
      'the deleted agent refused by the deaf service',
      { intervalMs: 25 },
    );
    for (const base of [listening.url, deaf.url]) {
      expect(await call(base, STAGES, bearer(agent.token))).toMatchObject({
        status: 401,
        code: 'credential_invalid',
      });
    }
  });

  test('when another agent is evicted, then this agent keeps working (the deny set is keyed by agent)', async () => {
    const [kept, evicted] = [await startedAgent(), await startedAgent()];
    expect((await hubCall(`/api/v1/agents/${evicted.id}/evict`, 'POST')).status).toBe(200);
    await eventually(
      async () => (await call(listening.url, STAGES, bearer(evicted.token))).status === 401,
      1_000,
      'the other evicted agent refused',
      { intervalMs: 25 },
    );
    expect((await call(listening.url, STAGES, bearer(kept.token))).status).toBe(200);
    expect((await call(deaf.url, STAGES, bearer(kept.token))).status).toBe(200);
  });
});

describe('a stopped agent', () => {
  test('when it is stopped, then its token still works on the hub and the Workflow API (a stop is no revocation: the agent keeps its id for a restart)', async () => {
    const agent = await startedAgent();
    expect((await hubCall(`/api/v1/agents/${agent.id}/stop`, 'POST')).status).toBe(200);
    const self = await hubCall('/api/v1/agents/me', 'GET', undefined, agent.token);
    expect(self).toMatchObject({ status: 200, data: { status: 'offline' } });
    // Past the deaf service's recheck time too: the hub's answer on the standing check is "active".
    await sleep(RECHECK_MS + 200);
    expect((await call(listening.url, STAGES, bearer(agent.token))).status).toBe(200);
    expect((await call(deaf.url, STAGES, bearer(agent.token))).status).toBe(200);
  });
});

describe('a participant removed or demoted', () => {
  test('when a member is demoted and then removed, then both services refuse them: the hub at once, the Workflow API within 1 s (notice) or its 10 s membership cache (notice lost)', async () => {
    const ws = `/api/v1/workspaces/${owner.workspace.slug}`;
    const email = `approver-${randomBytes(3).toString('hex')}@example.test`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const added = await hubCall(`${ws}/members`, 'POST', { email, role: 'admin', password });
    expect(added.status).toBe(201);
    const participantId = (added.data as { participant: { id: string } }).participant.id;
    const login = await call(hub.url, '/api/v1/auth/login', {}, 'POST', { email, password });
    const token = (login.data as { token: string }).token;
    const approval = `/api/v1/projects/${project.id}/workflow/invocations/inv_unknown0000/approval`;
    const decide = (base: string) => call(base, approval, bearer(token), 'POST', { decision: 'approve' });
    const contracts = `/api/v1/projects/${project.id}/workflow/contracts`;
    const write = (base: string) =>
      call(base, contracts, bearer(token), 'POST', { intent: 'x', stages: [] }).then((r) => r.status);

    // An admin reaches the (missing) invocation on both; each now caches the membership.
    for (const base of [listening.url, deaf.url]) {
      expect(await decide(base)).toMatchObject({ status: 404, code: 'invocation_not_found' });
    }
    expect(await write(deaf.url)).not.toBe(403);

    expect((await hubCall(`${ws}/members/${participantId}`, 'PATCH', { role: 'viewer' })).status).toBe(200);
    const demotedAt = Date.now();
    // The hub reads the membership on every request.
    expect((await hubCall(`${ws}/api-keys`, 'POST', { name: 'k', scopes: [] }, token)).status).toBe(403);
    await eventually(
      async () => (await decide(listening.url)).status === 403,
      1_000,
      'the demoted member refused approval',
      { intervalMs: 25 },
    );
    expect(await decide(listening.url)).toMatchObject({ status: 403, code: 'approval_role_required' });
    await eventually(
      async () => (await write(deaf.url)) === 403,
      MEMBER_CACHE_MS + 1_000,
      'the demoted member refused a write by the deaf service',
      { intervalMs: 25 },
    );
    expect(Date.now() - demotedAt).toBeLessThan(MEMBER_CACHE_MS + 1_000);

    expect((await hubCall(`${ws}/members/${participantId}`, 'DELETE')).status).toBe(204);
    const removedAt = Date.now();
    expect((await hubCall(`${ws}/members`, 'GET', undefined, token)).status).toBeGreaterThanOrEqual(403);
    await eventually(
      async () => (await decide(listening.url)).code === 'project_not_found',
      1_000,
      'the removed member refused by the listening service',
      { intervalMs: 25 },
    );
    await eventually(
      async () => (await decide(deaf.url)).code === 'project_not_found',
      MEMBER_CACHE_MS + 1_000,
      'the removed member refused by the deaf service',
      { intervalMs: 25 },
    );
    expect(Date.now() - removedAt).toBeLessThan(MEMBER_CACHE_MS + 1_000);
  });
});

describe('the hub out of reach', () => {
  test('when the hub cannot be asked about an agent whose standing is not known, then the Workflow API answers 503 hub_unavailable, never 200 or 401', async () => {
    const agent = await startedAgent();
    expect((await call(deaf.url, STAGES, bearer(agent.token))).status).toBe(200);
    await hub.process.stop();
    // Within the recheck time the last answer holds (the JWKS is cached too).
    await sleep(RECHECK_MS + 200);
    expect(await call(deaf.url, STAGES, bearer(agent.token))).toMatchObject({
      status: 503,
      code: 'hub_unavailable',
    });
  });
});
