import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHubClient, unwrap } from '@svc/contracts';
import type { HubApi, RelayApi } from '@svc/contracts';
import { startHttpServer } from '@svc/service-kit';
import { eventually } from '@svc/testing';
import { createHubService } from '../src/app';
import { relayBaseUrl } from '../src/data/relay-client';
import { AGENT_NAME_PATTERN, spawnAgentName } from '../src/domain/spawn-policy';
import { requestAgentSpawn } from '../src/use-cases/spawn/request-agent-spawn';
import { createProject } from './support/agents-fixtures';
import { createKey, loggerInto, startTestHub, testSettings } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

type SpawnRequest = RelayApi.components['schemas']['SpawnRequest'];
type AgentSpawn = HubApi.components['schemas']['AgentSpawn'];

const ENCRYPTION_KEYS = `k1:${randomBytes(32).toString('base64')}`;
const SPAWN_SETTINGS = {
  HUB_ENCRYPTION_KEYS: ENCRYPTION_KEYS,
  HUB_MANAGED_PROVIDERS: ['local'],
  HUB_SPAWN_RELAY_TIMEOUT_SECONDS: 1,
  HUB_SPAWN_DEADLINE_SECONDS: 20,
  HUB_SPAWN_WAIT_SECONDS: 8,
  HUB_SPAWN_SWEEP_INTERVAL_SECONDS: 0.2,
};

/** What the fake relay answers next for a spawn id. */
type Answer =
  | { kind: 'in_flight'; retryAfter?: number }
  | { kind: 'started' }
  | { kind: 'problem'; status: number; code: string; rule?: number; cli_code?: string }
  | { kind: 'untyped'; status: number }
  | { kind: 'hang'; ms: number };

interface RelayCall {
  token: string | undefined;
  body: SpawnRequest;
}

/**
 * A relay that implements the relaySpawn contract for the test: it checks the token like the real relay,
 * answers from a script per spawn id, and on `started` does what `svc start` does at the hub (register the
 * agent on its project with the host's key, start it with launch path relay and the spawn id).
 */
class FakeRelay {
  server!: Server;
  calls: RelayCall[] = [];
  scripts = new Map<string, Answer[]>();
  defaultScript: Answer[] = [{ kind: 'started' }];
  constructor(
    private readonly hub: () => TestHub,
    readonly hostId: string,
    readonly relayToken: string,
    private readonly runtimeKey: () => string,
    private readonly workspace: () => string,
  ) {}

  async start(): Promise<number> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  callsOf(spawnId: string) {
    return this.calls.filter((c) => c.body.spawn_id === spawnId);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const token = req.headers['x-svc-relay-token'] as string | undefined;
    const problem = (status: number, body: Record<string, unknown>) => {
      res.writeHead(status, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'x', status, ...body }));
    };
    if (req.method !== 'POST' || req.url !== '/spawn') return problem(404, { code: 'not_found' });
    if (!token) return problem(401, { code: 'relay_token_missing' });
    if (token !== this.relayToken) return problem(403, { code: 'relay_token_invalid' });
    const body = JSON.parse(raw) as SpawnRequest;
    this.calls.push({ token, body });
    const script = this.scripts.get(body.spawn_id) ?? [...this.defaultScript];
    this.scripts.set(body.spawn_id, script);
    const answer = script.length > 1 ? script.shift()! : script[0]!;
    switch (answer.kind) {
      case 'in_flight':
        res.writeHead(202, {
          'content-type': 'application/json',
          'retry-after': String(answer.retryAfter ?? 0),
        });
        return res.end(
          JSON.stringify({
            spawn_id: body.spawn_id,
            state: 'in_progress',
            requested_at: new Date().toISOString(),
          }),
        );
      case 'problem':
        return problem(answer.status, {
          code: answer.code,
          detail: `refused: ${answer.code}`,
          spawn_id: body.spawn_id,
          rule: answer.rule ?? null,
          cli_code: answer.cli_code ?? null,
        });
      case 'untyped':
        res.writeHead(answer.status, { 'content-type': 'text/html' });
        return res.end('<html>bad gateway</html>');
      case 'hang':
        await new Promise((resolve) => setTimeout(resolve, answer.ms));
        if (!res.destroyed) problem(503, { code: 'too_late' });
        return;
      case 'started': {
        const agent = await this.startAgentAtHub(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            spawn_id: body.spawn_id,
            state: 'started',
            agent_id: agent.id,
            name: body.agent.name,
            pid: 4242,
            serve_port: body.agent.serve ? 4341 : null,
            runtime_instance_id: this.hostId,
            started_at: new Date().toISOString(),
          }),
        );
      }
    }
  }

  /** What the local `svc start --project <code>` does at the hub for a relay spawn. */
  private async startAgentAtHub(body: SpawnRequest) {
    const client = this.hub().client({ apiKey: this.runtimeKey() });
    const agent = unwrap(
      await client.POST('/api/v1/workspaces/{workspace}/agents', {
        params: { path: { workspace: this.workspace() } },
        body: {
          name: body.agent.name,
          runtime_instance_id: this.hostId,
          project_code: body.agent.project,
          capabilities: body.agent.capabilities,
          model: body.agent.model,
        },
      }),
    );
    unwrap(
      await client.POST('/api/v1/agents/{agentId}/start', {
        params: { path: { agentId: agent.id } },
        body: { launch_path: 'relay', spawn_id: body.spawn_id },
      }),
    );
    return agent;
  }
}

let t: TestHub;
let owner: SeededMember;
let runtimeKey: string;
let relay: FakeRelay;
let projectCode: string;
let projectId: string;

const ws = () => owner.workspace.slug;
const api = () => t.client({ token: owner.token });

type PolicyBody = HubApi.components['schemas']['SpawnPolicyRequest'];

/** Sets the workspace's policy, or a project's override, and answers the raw result. */
async function putPolicy(
  body: PolicyBody,
  project?: string,
): Promise<{ response: Response; error?: unknown }> {
  if (project) {
    return api().PUT('/api/v1/workspaces/{workspace}/projects/{project}/spawn-policy', {
      params: { path: { workspace: ws(), project } },
      body,
    });
  }
  return api().PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
    params: { path: { workspace: ws() } },
    body,
  });
}

async function putProjectPolicy(body: PolicyBody, project: string) {
  return unwrap(
    await api().PUT('/api/v1/workspaces/{workspace}/projects/{project}/spawn-policy', {
      params: { path: { workspace: ws(), project } },
      body,
    }),
  );
}

async function putWorkspacePolicy(body: PolicyBody) {
  return unwrap(
    await api().PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
      params: { path: { workspace: ws() } },
      body,
    }),
  );
}

const OPEN_POLICY = {
  enabled: true,
  allowed_models: ['local/echo'],
  allowed_capabilities: ['code', 'review', 'qa:e2e'],
  max_running_agents_per_host: 3,
};

async function spawn(
  body: HubApi.components['schemas']['AgentSpawnRequest'],
  caller = { token: owner.token },
) {
  const res = await t.client(caller).POST('/api/v1/workspaces/{workspace}/agent-spawns', {
    params: { path: { workspace: ws() } },
    body,
  });
  return res;
}

async function auditOf(action: string, targetId?: string) {
  return t.database.prisma.auditEvent.findMany({
    where: { workspaceId: owner.workspace.id, action, ...(targetId ? { targetId } : {}) },
    orderBy: { createdAt: 'asc' },
  });
}

/** Makes every host of the workspace but `keep` unable to take spawns, so host choice is deterministic. */
async function onlyHost(keep: string) {
  await t.database.prisma.runtimeHost.updateMany({
    where: { workspaceId: owner.workspace.id, id: { not: keep } },
    data: { relayReady: false },
  });
}

beforeAll(async () => {
  t = await startTestHub({ settings: SPAWN_SETTINGS });
  owner = await t.seedMember('owner');
  runtimeKey = (await createKey(t, owner, { preset: 'agent-runtime' })).key;
  const project = await createProject(t, owner, 'Web_App');
  projectCode = project.code;
  projectId = project.id;
  const relayToken = `rly_${randomBytes(24).toString('base64url')}`;
  const hostId = (await t.seedHost(owner.workspace.id)).id;
  relay = new FakeRelay(
    () => t,
    hostId,
    relayToken,
    () => runtimeKey,
    ws,
  );
  const port = await relay.start();
  await t.database.prisma.runtimeHost.update({
    where: { id: hostId },
    data: {
      relayBindHost: '127.0.0.1',
      relayListenPort: port,
      relayPublicUrl: null,
      relayTokenCiphertext: t.hub.deps.box.seal(relayToken, hostId),
    },
  });
}, 60_000);

afterAll(async () => {
  await t.hub.spawns.stop();
  await relay.close();
  await t.close();
});

beforeEach(async () => {
  // Every test starts from one spawn-ready host (the fake relay's) with a fresh heartbeat and no load.
  await t.database.prisma.runtimeHost.updateMany({
    where: { id: relay.hostId },
    data: { lastHeartbeatAt: new Date(), relayReady: true },
  });
  await onlyHost(relay.hostId);
  await t.database.prisma.agent.updateMany({
    where: { workspaceId: owner.workspace.id },
    data: { status: 'offline' },
  });
  await t.database.prisma.agentSpawn.updateMany({
    where: { workspaceId: owner.workspace.id, state: { in: ['requested', 'in_progress'] } },
    data: { state: 'failed', errorCode: 'test_reset' },
  });
  await putPolicy(OPEN_POLICY);
});

describe('spawn policy', () => {
  test('when a workspace never set a policy, then GET answers the default, off', async () => {
    const other = await t.seedMember('owner');
    const policy = unwrap(
      await t.client({ token: other.token }).GET('/api/v1/workspaces/{workspace}/spawn-policy', {
        params: { path: { workspace: other.workspace.slug } },
      }),
    );
    expect(policy).toMatchObject({
      scope: 'workspace',
      stored: false,
      enabled: false,
      allowed_models: [],
      allowed_capabilities: [],
      allowed_command_keys: ['default'],
      project_id: null,
    });
  });

  test('when an admin sets the policy, then it is stored, de-duplicated and audited with before and after', async () => {
    const policy = await putWorkspacePolicy({
      ...OPEN_POLICY,
      allowed_models: ['local/echo', 'openai/gpt-5', 'local/echo'],
    });
    expect(policy).toMatchObject({
      stored: true,
      enabled: true,
      allowed_models: ['local/echo', 'openai/gpt-5'],
      allowed_command_keys: ['default'],
      max_running_agents_per_host: 3,
      updated_by: owner.participantId,
    });
    const [last] = (await auditOf('spawn_policy.updated', owner.workspace.id)).slice(-1);
    expect(last?.data).toMatchObject({
      scope: 'workspace',
      after: { allowed_models: ['local/echo', 'openai/gpt-5'], enabled: true },
    });
  });

  test('when a model is not an exact catalog identifier, then 400 provider_model_unsupported and nothing changes', async () => {
    const res = await putPolicy({ enabled: true, allowed_models: ['local/echo', 'claude-sonnet'] });
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ code: 'provider_model_unsupported', field: 'allowed_models[1]' });
    const policy = unwrap(
      await api().GET('/api/v1/workspaces/{workspace}/spawn-policy', {
        params: { path: { workspace: ws() } },
      }),
    );
    expect(policy.allowed_models).toEqual(['local/echo']);
  });

  test('when a member (not admin) or a key without admin:workspace writes the policy, then 403; an admin:workspace key may', async () => {
    const member = await t.seedMember('member', owner.workspace);
    const byMember = await t
      .client({ token: member.token })
      .PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
        params: { path: { workspace: ws() } },
        body: { enabled: false },
      });
    expect(byMember.response.status).toBe(403);
    const readKey = (await createKey(t, owner, { scopes: ['agents:read', 'agents:spawn'] })).key;
    const byKey = await t.client({ apiKey: readKey }).PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
      params: { path: { workspace: ws() } },
      body: { enabled: false },
    });
    expect(byKey.response.status).toBe(403);
    const adminKey = (await createKey(t, owner, { scopes: ['admin:workspace'] })).key;
    const byAdminKey = await t
      .client({ apiKey: adminKey })
      .PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
        params: { path: { workspace: ws() } },
        body: OPEN_POLICY,
      });
    expect(byAdminKey.response.status).toBe(200);
    expect(unwrap(byAdminKey).updated_by).toMatch(/^key_/);
  });

  test('when a project sets an override, then it is the effective policy until it is deleted', async () => {
    const before = unwrap(
      await api().GET('/api/v1/workspaces/{workspace}/projects/{project}/spawn-policy', {
        params: { path: { workspace: ws(), project: projectCode } },
      }),
    );
    expect(before).toMatchObject({
      project_id: projectId,
      override: null,
      effective: { scope: 'workspace', enabled: true },
    });

    const set = await putProjectPolicy({ enabled: false }, projectId);
    expect(set.override).toMatchObject({ scope: 'project', project_id: projectId, enabled: false });
    expect(set.effective).toMatchObject({ scope: 'project', enabled: false });
    const refused = await spawn({ project: projectCode, capabilities: ['code'] });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: 'spawn_policy_off' });

    const removed = unwrap(
      await api().DELETE('/api/v1/workspaces/{workspace}/projects/{project}/spawn-policy', {
        params: { path: { workspace: ws(), project: projectCode } },
      }),
    );
    expect(removed).toMatchObject({ override: null, effective: { scope: 'workspace', enabled: true } });
    expect(await auditOf('spawn_policy.deleted', projectId)).toHaveLength(1);
  });

  test('when a project of another workspace is named, then 404', async () => {
    const other = await t.seedMember('owner');
    const far = await createProject(t, other, 'FAR');
    const res = await api().GET('/api/v1/workspaces/{workspace}/projects/{project}/spawn-policy', {
      params: { path: { workspace: ws(), project: far.id } },
    });
    expect(res.response.status).toBe(404);
  });
});

describe('spawn-policy blockers', () => {
  test.each([
    [
      'spawn_policy_off',
      { enabled: false, allowed_models: ['local/echo'], allowed_capabilities: ['code'] },
      {},
    ],
    ['spawn_model_not_allowed', OPEN_POLICY, { model: 'openai/gpt-5' }],
    ['spawn_model_not_allowed', { ...OPEN_POLICY, allowed_models: [] }, {}],
    ['spawn_capability_not_allowed', OPEN_POLICY, { capabilities: ['code', 'deploy'] }],
    ['spawn_command_not_allowed', OPEN_POLICY, { command_key: 'nightly' }],
  ] as [string, PolicyBody, Record<string, unknown>][])(
    'when the policy blocks it (%s), then 409 naming the blocker and no spawn or relay call',
    async (code, policy, ask) => {
      await putPolicy(policy);
      const calls = relay.calls.length;
      const res = await spawn({ project: projectCode, capabilities: ['code'], ...ask });
      expect(res.response.status).toBe(409);
      expect(res.error).toMatchObject({
        code,
        blocker: { category: 'spawn_policy', code, recommended_action: expect.any(String) },
      });
      expect(relay.calls.length).toBe(calls);
      expect(await auditOf('agent.spawn.requested')).not.toContainEqual(
        expect.objectContaining({ data: expect.objectContaining({ capabilities: ['code', 'deploy'] }) }),
      );
    },
  );

  test('when the only host is stale or its relay is not ready, then 409 spawn_no_ready_host naming it', async () => {
    await t.database.prisma.runtimeHost.update({
      where: { id: relay.hostId },
      data: { lastHeartbeatAt: new Date(Date.now() - 120_000) },
    });
    const stale = await spawn({ project: projectCode, capabilities: ['code'] });
    expect(stale.error).toMatchObject({
      code: 'spawn_no_ready_host',
      blocker: { runtime_instance_ids: expect.arrayContaining([relay.hostId]) },
    });
    await t.database.prisma.runtimeHost.update({
      where: { id: relay.hostId },
      data: { lastHeartbeatAt: new Date(), relayReady: false },
    });
    const notReady = await spawn({ project: projectCode, capabilities: ['code'] });
    expect(notReady.response.status).toBe(409);
    expect(notReady.error).toMatchObject({ code: 'spawn_no_ready_host' });
  });

  test('when every ready host runs its limit of agents, then 429 spawn_host_at_limit with Retry-After', async () => {
    await putPolicy({ ...OPEN_POLICY, max_running_agents_per_host: 1 });
    const running = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: relay.hostId });
    const res = await spawn({ project: projectCode, capabilities: ['code'] });
    expect(res.response.status).toBe(429);
    expect(res.response.headers.get('retry-after')).toBe('30');
    expect(res.error).toMatchObject({
      code: 'spawn_host_at_limit',
      blocker: { runtime_instance_ids: [relay.hostId], retry_after_seconds: 30 },
    });
    await t.database.prisma.agent.update({ where: { id: running.id }, data: { status: 'offline' } });
  });
});

describe('host selection', () => {
  test('when several hosts are spawn ready, then the least loaded one under the limit is chosen, never a stale or relay-less one', async () => {
    const stale = await t.seedHost(owner.workspace.id, { lastHeartbeatAt: new Date(Date.now() - 120_000) });
    const relayless = await t.seedHost(owner.workspace.id, { relayReady: false });
    const busy = await t.seedHost(owner.workspace.id);
    const idle = await t.seedHost(owner.workspace.id);
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: busy.id });
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: relay.hostId });
    const readiness = unwrap(
      await t.internal().GET('/internal/v1/projects/{projectId}/spawn-readiness', {
        params: { path: { projectId }, query: { capabilities: 'code' } },
      }),
    );
    expect(readiness).toEqual({
      allowed: true,
      model: 'local/echo',
      runtime_instance_id: idle.id,
      command_key: 'default',
      blockers: [],
    });
    expect([stale.id, relayless.id]).not.toContain(readiness.runtime_instance_id);
  });
});

describe('placement and back-pressure (per-host limits)', () => {
  /** A spawn in progress on `hostId`, held by a lease no sweeper takes over (its relay is never called). */
  async function seedOpenSpawn(hostId: string) {
    const id = `spw_${randomBytes(8).toString('hex')}`;
    await t.database.prisma.agentSpawn.create({
      data: {
        id,
        workspaceId: owner.workspace.id,
        projectId,
        runtimeInstanceId: hostId,
        state: 'in_progress',
        origin: 'api',
        requestFingerprint: id,
        name: `held-${randomBytes(4).toString('hex')}`,
        model: 'local/echo',
        capabilities: ['code'],
        commandKey: 'default',
        relayRequest: {},
        requestedBy: { kind: 'test', id: null },
        authorization: { source: 'participant' },
        leaseOwner: 'test-holder',
        leaseUntil: new Date(Date.now() + 3_600_000),
        deadlineAt: new Date(Date.now() + 3_600_000),
      },
    });
    return id;
  }

  async function setLimits(
    hostId: string,
    body: HubApi.components['schemas']['SetRuntimeHostLimitsRequest'],
  ) {
    return api().PUT('/api/v1/runtime-hosts/{hostId}/limits', { params: { path: { hostId } }, body });
  }

  async function readiness() {
    return unwrap(
      await t.internal().GET('/internal/v1/projects/{projectId}/spawn-readiness', {
        params: { path: { projectId }, query: { capabilities: 'code' } },
      }),
    );
  }

  afterEach(async () => {
    await t.database.prisma.runtimeHost.updateMany({
      where: { workspaceId: owner.workspace.id },
      data: { maxAgents: null, maxConcurrentSpawns: null },
    });
  });

  test('when a host is set limits, then they are validated, answered with the host, audited, and kept by omission', async () => {
    const set = await setLimits(relay.hostId, { max_concurrent_spawns: 2, max_agents: 5 });
    expect(set.response.status).toBe(200);
    expect(unwrap(set).limits).toEqual({ max_concurrent_spawns: 2, max_agents: 5 });
    const partial = unwrap(await setLimits(relay.hostId, { max_agents: null }));
    expect(partial.limits).toEqual({ max_concurrent_spawns: 2, max_agents: null });
    const read = unwrap(
      await api().GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: relay.hostId } } }),
    );
    expect(read.limits).toEqual({ max_concurrent_spawns: 2, max_agents: null });
    const zero = await setLimits(relay.hostId, { max_concurrent_spawns: 0 });
    expect(zero.response.status).toBe(400);
    expect(zero.error).toMatchObject({ code: 'validation_failed' });
    const member = await t.seedMember('member', owner.workspace);
    const refused = await t.client({ token: member.token }).PUT('/api/v1/runtime-hosts/{hostId}/limits', {
      params: { path: { hostId: relay.hostId } },
      body: { max_agents: 1 },
    });
    expect(refused.response.status).toBe(403);
    const audited = await auditOf('runtime_host.limits_set', relay.hostId);
    expect(audited.map((a) => (a.data as { max_agents: number | null }).max_agents)).toEqual([5, null]);
  });

  test('when hosts differ in load and limits, then the spawn goes to the least loaded host with room for an agent and a spawn', async () => {
    const other = await t.seedHost(owner.workspace.id);
    // Both ready; the relay's host runs one agent, the other none: the other is the least loaded.
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: relay.hostId });
    expect((await readiness()).runtime_instance_id).toBe(other.id);
    // The other host allows no spawn in progress beyond one, and has one: the loaded host takes the spawn.
    unwrap(await setLimits(other.id, { max_concurrent_spawns: 1 }));
    await seedOpenSpawn(other.id);
    expect((await readiness()).runtime_instance_id).toBe(relay.hostId);
    // The relay's host allows one agent and runs one: nothing fits; the other has room for an agent but is busy.
    unwrap(await setLimits(relay.hostId, { max_agents: 1 }));
    const busy = await readiness();
    expect(busy).toMatchObject({ allowed: false, runtime_instance_id: null });
    expect(busy.blockers).toEqual([
      expect.objectContaining({
        code: 'spawn_host_busy',
        runtime_instance_ids: [other.id],
        retry_after_seconds: 10,
      }),
    ]);
    const refused = await spawn({ project: projectCode, capabilities: ['code'] });
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get('retry-after')).toBe('10');
    expect(refused.error).toMatchObject({
      code: 'spawn_host_busy',
      blocker: { category: 'spawn_policy', code: 'spawn_host_busy', retry_after_seconds: 10 },
    });
    // With the other host's agent limit at its load (one spawn in progress), both are full: at limit.
    unwrap(await setLimits(other.id, { max_agents: 1 }));
    const full = await readiness();
    expect(full.blockers.map((b) => [b.code, b.retry_after_seconds])).toEqual([['spawn_host_at_limit', 30]]);
    const internal = await t.internal().POST('/internal/v1/projects/{projectId}/agent-spawns', {
      params: { path: { projectId } },
      body: {
        spawn_key: `limits-${randomBytes(4).toString('hex')}`,
        capabilities: ['code'],
        reason: { invocation_id: 'inv_limits', stage_key: 'build' },
      },
    });
    expect(internal.response.status).toBe(429);
    expect(internal.response.headers.get('retry-after')).toBe('30');
    expect(internal.error).toMatchObject({ code: 'spawn_host_at_limit' });
    await t.database.prisma.runtimeHost.update({ where: { id: other.id }, data: { relayReady: false } });
  });

  test('when a host is silent past the lost threshold but not yet stale, then no spawn goes to it', async () => {
    const late = await t.seedHost(owner.workspace.id, { lastHeartbeatAt: new Date(Date.now() - 35_000) });
    // The relay's host runs one agent; the late host none: without the lost rule it would be chosen.
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: relay.hostId });
    const chosen = await readiness();
    expect(chosen.runtime_instance_id).toBe(relay.hostId);
    const host = unwrap(
      await api().GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: late.id } } }),
    );
    expect(host.readiness).toMatchObject({ heartbeat_fresh: true, spawn_ready: false });
    expect(host.readiness.causes.map((c) => c.code)).toContain('heartbeat_late');
    await t.database.prisma.runtimeHost.update({ where: { id: late.id }, data: { relayReady: false } });
  });
});

describe('agent spawns through the relay', () => {
  afterEach(() => {
    relay.defaultScript = [{ kind: 'started' }];
  });

  test('when the relay answers 202, an untyped 502, a hang and then 200, then the same spawn id is retried until the agent is started', async () => {
    relay.defaultScript = [
      { kind: 'in_flight', retryAfter: 0 },
      { kind: 'untyped', status: 502 },
      { kind: 'hang', ms: 2_500 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'started' },
    ];
    const res = await spawn({ project: projectCode, capabilities: ['code', 'review'], serve: true });
    expect(res.response.status).toBe(201);
    const spawned = unwrap(res) as AgentSpawn;
    expect(spawned).toMatchObject({
      state: 'started',
      project_code: projectCode,
      runtime_instance_id: relay.hostId,
      model: 'local/echo',
      capabilities: ['code', 'review'],
      command_key: 'default',
      serve: true,
      pid: 4242,
      serve_port: 4341,
      attempts: 5,
      error: null,
      requested_by: { kind: 'participant', id: owner.participantId },
      authorization: { source: 'participant', role: 'owner' },
    });
    expect(spawned.id).toMatch(/^spw_/);
    expect(spawned.name).toMatch(AGENT_NAME_PATTERN);
    expect(spawned.name).toMatch(/^web-app-code-[a-z0-9]{6}$/);
    const calls = relay.callsOf(spawned.id);
    expect(calls).toHaveLength(5);
    for (const call of calls) {
      expect(call.token).toBe(relay.relayToken);
      expect(call.body).toEqual({
        spawn_id: spawned.id,
        command_key: 'default',
        agent: {
          name: spawned.name,
          model: 'local/echo',
          capabilities: ['code', 'review'],
          project: projectCode,
          serve: true,
          worker: false,
        },
      });
    }
    const agent = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: spawned.agent_id! } });
    expect(agent).toMatchObject({
      name: spawned.name,
      projectId,
      status: 'online',
      runtimeInstanceId: relay.hostId,
    });
    const [requested] = await auditOf('agent.spawn.requested', spawned.id);
    expect(requested?.data).toMatchObject({ spawn_id: spawned.id, authorization_source: 'participant' });
    const [started] = await auditOf('agent.spawn.started', spawned.id);
    expect(started?.data).toMatchObject({
      spawn_id: spawned.id,
      agent_id: agent.id,
      authorization_source: 'participant',
    });

    // One runtime credential for the relay spawn, carrying its spawn id and launch path.
    const issued = await t.database.prisma.auditEvent.findMany({
      where: { action: 'credential.runtime.issued', targetId: agent.id },
    });
    expect(issued).toHaveLength(1);
    expect(issued[0]?.data).toMatchObject({
      launch_path: 'relay',
      spawn_id: spawned.id,
      authorization_source: 'hub_managed',
    });

    // The relay token is in the header only: never in an answer, the audit or the hub's logs.
    const listed = await api().GET('/api/v1/workspaces/{workspace}/agent-spawns', {
      params: { path: { workspace: ws() } },
    });
    expect(JSON.stringify(listed.data)).not.toContain(relay.relayToken);
    expect(JSON.stringify(spawned)).not.toContain(relay.relayToken);
    const audit = JSON.stringify(
      await t.database.prisma.auditEvent.findMany({ where: { workspaceId: owner.workspace.id } }),
    );
    expect(audit).not.toContain(relay.relayToken);
    expect(t.logs.join('\n')).not.toContain(relay.relayToken);
    expect(t.logs.join('\n')).toContain('relay spawn call gave no outcome; retrying');
  });

  test('when the same spawn_id is sent again, then the same spawn answers; with another body, 409 idempotency_conflict', async () => {
    const key = `same-${randomBytes(6).toString('hex')}`;
    const first = await spawn({ project: projectId, capabilities: ['review'], spawn_id: key });
    expect(first.response.status).toBe(201);
    const again = await spawn({ project: projectId, capabilities: ['review'], spawn_id: key });
    expect(again.response.status).toBe(200);
    expect(unwrap(again).id).toBe(unwrap(first).id);
    expect(relay.callsOf(unwrap(first).id)).toHaveLength(1);
    const changed = await spawn({ project: projectId, capabilities: ['code'], spawn_id: key });
    expect(changed.response.status).toBe(409);
    expect(changed.error).toMatchObject({ code: 'idempotency_conflict', spawn_id: unwrap(first).id });
  });

  test('when the relay answers a typed problem, then the spawn fails at once with its code, rule and cli code kept', async () => {
    relay.defaultScript = [
      {
        kind: 'problem',
        status: 422,
        code: 'start_rule_violated',
        rule: 5,
        cli_code: 'project_and_workdir_exclusive',
      },
    ];
    const res = await spawn({ project: projectCode, capabilities: ['code'], name: 'typed-failure' });
    expect(res.response.status).toBe(201);
    const failed = unwrap(res);
    expect(failed).toMatchObject({
      state: 'failed',
      name: 'typed-failure',
      agent_id: null,
      attempts: 1,
      error: { code: 'start_rule_violated', rule: 5, cli_code: 'project_and_workdir_exclusive', status: 422 },
    });
    const [event] = await auditOf('agent.spawn.failed', failed.id);
    expect(event?.data).toMatchObject({ code: 'start_rule_violated', rule: 5, spawn_id: failed.id });
    const events = unwrap(
      await api().GET('/api/v1/workspaces/{workspace}/audit-events', {
        params: { path: { workspace: ws() }, query: { action: 'agent.spawn.*' } },
      }),
    );
    const ofSpawn = events.filter((e) => e.target?.id === failed.id).map((e) => e.action);
    expect(ofSpawn.sort()).toEqual(['agent.spawn.failed', 'agent.spawn.requested']);
    const got = unwrap(
      await api().GET('/api/v1/workspaces/{workspace}/agent-spawns/{spawnId}', {
        params: { path: { workspace: ws(), spawnId: failed.id } },
      }),
    );
    expect(got).toEqual(failed);
    const byState = unwrap(
      await api().GET('/api/v1/workspaces/{workspace}/agent-spawns', {
        params: { path: { workspace: ws() }, query: { state: 'failed', project: projectCode } },
      }),
    );
    expect(byState.map((s) => s.id)).toContain(failed.id);
    expect(byState.every((s) => s.state === 'failed')).toBe(true);
  });

  test('when the relay refuses the token, then the spawn fails with the relay code (the wrong token never leaves the hub)', async () => {
    const sealed = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: relay.hostId } });
    const wrong = `rly_${randomBytes(24).toString('base64url')}`;
    await t.database.prisma.runtimeHost.update({
      where: { id: relay.hostId },
      data: { relayTokenCiphertext: t.hub.deps.box.seal(wrong, relay.hostId) },
    });
    try {
      const failed = unwrap(await spawn({ project: projectCode, capabilities: ['code'] }));
      expect(failed).toMatchObject({ state: 'failed', error: { code: 'relay_token_invalid', status: 403 } });
      expect(t.logs.join('\n')).not.toContain(wrong);
    } finally {
      await t.database.prisma.runtimeHost.update({
        where: { id: relay.hostId },
        data: { relayTokenCiphertext: sealed.relayTokenCiphertext },
      });
    }
  });

  test('when the relay stays in flight, then the request answers 202 in progress and GET shows the outcome later', async () => {
    relay.defaultScript = [
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'in_flight', retryAfter: 1 },
      { kind: 'started' },
    ];
    const res = await spawn({ project: projectCode, capabilities: ['code'] });
    expect(res.response.status).toBe(202);
    const pending = unwrap(res);
    expect(pending.state).toBe('in_progress');
    const ended = await spawnInState(pending.id, ['started', 'failed'], 20_000);
    expect(ended).toMatchObject({ state: 'started', attempts: 11 });
  }, 40_000);

  test('when a hub stopped with a spawn open, then the sweeper of the next hub process resumes it to its outcome', async () => {
    // The record is committed and the process stops before its relay call: what a crash leaves behind.
    const recorded = await requestAgentSpawn(t.hub.deps, {
      project: { workspaceId: owner.workspace.id, ref: projectCode },
      capabilities: ['code'],
      serve: false,
      origin: 'api',
      actor: { kind: 'participant', participantId: owner.participantId } as never,
      authorization: { source: 'participant', role: 'owner' },
      deadlineMs: 20_000,
    });
    await t.database.prisma.agentSpawn.update({
      where: { id: recorded.spawn.id },
      data: {
        state: 'in_progress',
        attempts: 1,
        leaseOwner: 'hub-gone',
        leaseUntil: new Date(Date.now() - 1_000),
      },
    });
    const logs: string[] = [];
    const next = await createHubService({
      database: t.database,
      settings: testSettings(SPAWN_SETTINGS),
      logger: loggerInto(logs),
      keyRefreshIntervalMs: 0,
    });
    const server = await startHttpServer(next.app, { host: '127.0.0.1', port: 0 });
    try {
      next.spawns.startSweeper();
      const ended = await spawnInState(recorded.spawn.id, ['started', 'failed'], 15_000);
      expect(ended).toMatchObject({ state: 'started', attempts: 2 });
      expect(relay.callsOf(recorded.spawn.id)).toHaveLength(1);
      const read = unwrap(
        await createHubClient({ baseUrl: server.url, token: owner.token }).GET(
          '/api/v1/workspaces/{workspace}/agent-spawns/{spawnId}',
          { params: { path: { workspace: ws(), spawnId: recorded.spawn.id } } },
        ),
      );
      expect(read.state).toBe('started');
      expect(logs.join('\n')).not.toContain(relay.relayToken);
    } finally {
      await next.spawns.stop();
      next.stop();
      await server.close(1000);
    }
  });

  test('when the relay gives no outcome before the deadline, then the spawn fails with spawn_deadline_exceeded', async () => {
    relay.defaultScript = [{ kind: 'in_flight', retryAfter: 1 }];
    const recorded = await requestAgentSpawn(t.hub.deps, {
      project: { workspaceId: owner.workspace.id, ref: projectCode },
      capabilities: ['code'],
      serve: false,
      origin: 'api',
      actor: { kind: 'participant', participantId: owner.participantId } as never,
      authorization: { source: 'participant', role: 'owner' },
      deadlineMs: 2_500,
    });
    t.hub.spawns.drive(recorded.spawn.id);
    const ended = await spawnInState(recorded.spawn.id, ['started', 'failed'], 10_000);
    expect(ended).toMatchObject({ state: 'failed', errorCode: 'spawn_deadline_exceeded', agentId: null });
    expect(ended.attempts).toBeGreaterThanOrEqual(2);
    expect(relay.callsOf(recorded.spawn.id).length).toBe(ended.attempts);
    const [event] = await auditOf('agent.spawn.failed', recorded.spawn.id);
    expect(event?.data).toMatchObject({ code: 'spawn_deadline_exceeded' });
  });

  test('when the relay token cannot be opened with the hub keys, then the spawn fails without calling the relay', async () => {
    const sealed = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: relay.hostId } });
    await t.database.prisma.runtimeHost.update({
      where: { id: relay.hostId },
      data: { relayTokenCiphertext: sealed.relayTokenCiphertext.slice(0, -6) + 'AAAAAA' },
    });
    try {
      const calls = relay.calls.length;
      const failed = unwrap(await spawn({ project: projectCode, capabilities: ['code'] }));
      expect(failed).toMatchObject({ state: 'failed', error: { code: 'relay_token_unavailable' } });
      expect(relay.calls.length).toBe(calls);
    } finally {
      await t.database.prisma.runtimeHost.update({
        where: { id: relay.hostId },
        data: { relayTokenCiphertext: sealed.relayTokenCiphertext },
      });
    }
  });

  test('when an automation key with agents:spawn asks, then the spawn records the key as its authorization source', async () => {
    const key = await createKey(t, owner, { scopes: ['agents:spawn', 'agents:read'] });
    const res = await spawn({ project: projectCode, capabilities: ['qa:e2e'] }, { apiKey: key.key } as never);
    expect(res.response.status).toBe(201);
    const spawned = unwrap(res);
    expect(spawned).toMatchObject({
      state: 'started',
      requested_by: { kind: 'api_key', id: key.id },
      authorization: { source: 'api_key' },
    });
    expect(spawned.name).toMatch(/^web-app-qa-e2e-[a-z0-9]{6}$/);
    const noScope = (await createKey(t, owner, { scopes: ['agents:read'] })).key;
    const refused = await spawn({ project: projectCode, capabilities: ['code'] }, {
      apiKey: noScope,
    } as never);
    expect(refused.response.status).toBe(403);
  });
});

/** The spawn's row once it is in one of `states`. */
function spawnInState(spawnId: string, states: string[], ms: number) {
  return eventually(
    async () => {
      const row = await t.database.prisma.agentSpawn.findUniqueOrThrow({ where: { id: spawnId } });
      return states.includes(row.state) && row;
    },
    ms,
    `spawn ${spawnId} ${states.join(' or ')}`,
    { intervalMs: 200 },
  );
}

describe('the Workflow API side', () => {
  test('when the policy and hosts allow it, then readiness is allowed; otherwise each blocker is listed with its action', async () => {
    const ok = unwrap(
      await t.internal().GET('/internal/v1/projects/{projectId}/spawn-readiness', {
        params: { path: { projectId }, query: { capabilities: 'code,review' } },
      }),
    );
    expect(ok).toEqual({
      allowed: true,
      model: 'local/echo',
      runtime_instance_id: relay.hostId,
      command_key: 'default',
      blockers: [],
    });
    await putPolicy({ enabled: false, allowed_models: [], allowed_capabilities: ['code'] });
    await t.database.prisma.runtimeHost.update({ where: { id: relay.hostId }, data: { relayReady: false } });
    const blocked = unwrap(
      await t.internal().GET('/internal/v1/projects/{projectId}/spawn-readiness', {
        params: { path: { projectId }, query: { capabilities: 'code,deploy' } },
      }),
    );
    expect(blocked).toMatchObject({ allowed: false, model: null, runtime_instance_id: null });
    expect(blocked.blockers.map((b) => b.code)).toEqual([
      'spawn_policy_off',
      'spawn_model_not_allowed',
      'spawn_capability_not_allowed',
      'spawn_no_ready_host',
    ]);
    for (const blocker of blocked.blockers) expect(blocker.recommended_action.length).toBeGreaterThan(20);
    await t.database.prisma.runtimeHost.update({ where: { id: relay.hostId }, data: { relayReady: true } });
    await putPolicy({ ...OPEN_POLICY, max_running_agents_per_host: 1 });
    const held = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: relay.hostId });
    const atLimit = unwrap(
      await t
        .internal()
        .GET('/internal/v1/projects/{projectId}/spawn-readiness', { params: { path: { projectId } } }),
    );
    expect(atLimit.blockers.map((b) => b.code)).toEqual(['spawn_host_at_limit']);
    await t.database.prisma.agent.update({ where: { id: held.id }, data: { status: 'offline' } });
  });

  test('when the Workflow API asks for a spawn, then it is recorded once per key, driven, and the agent joins the roster', async () => {
    const body = {
      spawn_key: `inv_123:stage-build:${randomBytes(4).toString('hex')}`,
      capabilities: ['code', 'review'],
      reason: { invocation_id: 'inv_123', stage_key: 'build' },
    };
    const created = await t.internal().POST('/internal/v1/projects/{projectId}/agent-spawns', {
      params: { path: { projectId } },
      body,
    });
    expect(created.response.status).toBe(201);
    const spawn = unwrap(created);
    expect(spawn).toMatchObject({ project_id: projectId, spawn_key: body.spawn_key, reason: body.reason });
    const again = await t.internal().POST('/internal/v1/projects/{projectId}/agent-spawns', {
      params: { path: { projectId } },
      body: { ...body, capabilities: ['code'] },
    });
    expect(again.response.status).toBe(200);
    expect(unwrap(again).id).toBe(spawn.id);

    await spawnInState(spawn.id, ['started', 'failed'], 10_000);
    const read = unwrap(
      await t
        .internal()
        .GET('/internal/v1/agent-spawns/{spawnId}', { params: { path: { spawnId: spawn.id } } }),
    );
    expect(read).toMatchObject({ state: 'started', agent_id: expect.stringMatching(/^agt_/) });
    const roster = unwrap(
      await t.internal().GET('/internal/v1/projects/{projectId}/roster', {
        params: { path: { projectId }, query: { capability: ['code', 'review'], available_only: true } },
      }),
    );
    expect(roster.map((a) => a.agent_id)).toContain(read.agent_id);
    const spawnRow = await t.database.prisma.agentSpawn.findUniqueOrThrow({ where: { id: spawn.id } });
    expect(spawnRow.authorization).toEqual({
      source: 'workflow_service',
      role: null,
      invocation_id: 'inv_123',
    });
    const [started] = await auditOf('agent.spawn.started', spawn.id);
    expect(started?.data).toMatchObject({
      authorization_source: 'workflow_service',
      invocation_id: 'inv_123',
    });
  });

  test('when spawns race for the last place on a host, then exactly one is recorded and the others meet its limit', async () => {
    relay.defaultScript = [{ kind: 'in_flight', retryAfter: 1 }];
    await putPolicy({ ...OPEN_POLICY, max_running_agents_per_host: 1 });
    try {
      const answers = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          t.internal().POST('/internal/v1/projects/{projectId}/agent-spawns', {
            params: { path: { projectId } },
            body: {
              spawn_key: `race-${n}-${randomBytes(4).toString('hex')}`,
              capabilities: ['code'],
              reason: { invocation_id: `inv_race${n}`, stage_key: 'build' },
            },
          }),
        ),
      );
      expect(answers.map((a) => a.response.status).sort()).toEqual([201, 429, 429, 429]);
      for (const refused of answers.filter((a) => a.response.status === 429)) {
        expect(refused.error).toMatchObject({ code: 'spawn_host_at_limit' });
      }
    } finally {
      relay.defaultScript = [{ kind: 'started' }];
    }
  });

  test('when the policy does not allow the Workflow API spawn, then 409 with the blocker code and nothing is recorded', async () => {
    await putPolicy({ enabled: false });
    const key = `inv_9:stage:${randomBytes(4).toString('hex')}`;
    const res = await t.internal().POST('/internal/v1/projects/{projectId}/agent-spawns', {
      params: { path: { projectId } },
      body: { spawn_key: key, capabilities: ['code'], reason: { invocation_id: 'inv_9', stage_key: 'x' } },
    });
    expect(res.response.status).toBe(409);
    expect(res.error).toMatchObject({ code: 'spawn_policy_off' });
    expect(await t.database.prisma.agentSpawn.count({ where: { idempotencyKey: key } })).toBe(0);
    await putPolicy(OPEN_POLICY);
    const outside = await t.internal().POST('/internal/v1/projects/{projectId}/agent-spawns', {
      params: { path: { projectId } },
      body: {
        spawn_key: `${key}/x`,
        capabilities: ['Code/Go'],
        reason: { invocation_id: 'inv_9', stage_key: 'x' },
      },
    });
    expect(outside.response.status).toBe(409);
    expect(outside.error).toMatchObject({ code: 'spawn_capability_not_allowed' });
    const readiness = unwrap(
      await t.internal().GET('/internal/v1/projects/{projectId}/spawn-readiness', {
        params: { path: { projectId }, query: { capabilities: 'code,Code/Go' } },
      }),
    );
    expect(readiness.blockers.map((b) => b.code)).toEqual(['spawn_capability_not_allowed']);
    const missing = await t.internal().GET('/internal/v1/agent-spawns/{spawnId}', {
      params: { path: { spawnId: 'spw_missing0000' } },
    });
    expect(missing.response.status).toBe(404);
  });
});

describe('relay spawn reports and starts', () => {
  test('when the relay reports a spawn event, then it is audited as relay.spawn.<event> with the spawn id', async () => {
    const res = await t.client({ apiKey: runtimeKey }).POST('/api/v1/runtime-hosts/{hostId}/spawn-events', {
      params: { path: { hostId: relay.hostId } },
      body: {
        spawn_id: 'spw_reported01',
        event: 'failed',
        agent_name: 'web-app-x',
        code: 'spawn_timeout',
        detail: 'stopped',
      },
    });
    expect(res.response.status).toBe(202);
    expect(unwrap(res)).toEqual({
      spawn_id: 'spw_reported01',
      event: 'failed',
      runtime_instance_id: relay.hostId,
    });
    const [event] = await auditOf('relay.spawn.failed', 'spw_reported01');
    expect(event?.data).toMatchObject({
      spawn_id: 'spw_reported01',
      code: 'spawn_timeout',
      agent_name: 'web-app-x',
    });

    const other = await t.seedMember('owner');
    const foreignHost = await t.seedHost(other.workspace.id);
    const foreign = await t
      .client({ apiKey: runtimeKey })
      .POST('/api/v1/runtime-hosts/{hostId}/spawn-events', {
        params: { path: { hostId: foreignHost.id } },
        body: { spawn_id: 'spw_reported02', event: 'started', agent_name: 'x-agent' },
      });
    expect(foreign.response.status).toBe(404);
  });

  test('when a direct start names a spawn_id, then 400 spawn_id_requires_relay and no credential is issued', async () => {
    const agent = await t.seedAgent(owner.workspace.id, {
      runtimeInstanceId: relay.hostId,
      status: 'offline',
      model: 'local/echo',
    });
    const res = await t.client({ apiKey: runtimeKey }).POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId: agent.id } },
      body: { launch_path: 'direct', spawn_id: 'spw_direct0001' },
    });
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ code: 'spawn_id_requires_relay' });
    expect(
      await t.database.prisma.auditEvent.count({
        where: { action: 'credential.runtime.issued', targetId: agent.id },
      }),
    ).toBe(0);
  });

  test('the generated agent name fits the hub and relay name patterns whatever the project code and capability', () => {
    for (const [code, caps] of [
      ['Web_App', ['code']],
      ['X'.repeat(40), ['a'.repeat(60)]],
      ['__', []],
      ['proj', ['qa:e2e.v2']],
    ] as const) {
      const name = spawnAgentName(code, caps);
      expect(name).toMatch(AGENT_NAME_PATTERN);
      expect(name).toMatch(/^[a-z0-9][a-z0-9._-]{0,62}$/);
    }
  });

  test('the relay base is the public relay URL when the host has one, else its bind address', () => {
    const host = {
      relayBindHost: '127.0.0.1',
      relayListenPort: 8787,
      consolePublicBaseUrl: 'https://c.example',
      relayPublicUrl: null,
    };
    expect(relayBaseUrl(host)).toBe('http://127.0.0.1:8787');
    expect(relayBaseUrl({ ...host, relayPublicUrl: 'https://relay.example.test/' })).toBe(
      'https://relay.example.test',
    );
    expect(
      relayBaseUrl(host, {
        tunnelState: 'active',
        consolePublicBaseUrl: 'https://c.tunnel',
        relayPublicBaseUrl: 'https://r.tunnel',
      }),
    ).toBe('https://r.tunnel');
  });
});
