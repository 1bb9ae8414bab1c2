import { randomBytes } from 'node:crypto';
import { unwrap } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
import { loadHubConfig } from '../src/env';
import { createKey, minutesAgo, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

type ConsoleRoutes = NonNullable<
  HubApi.components['schemas']['RuntimeHostHeartbeatRequest']['console_routes']
>;

/** The hub's production default body limit (`HUB_BODY_LIMIT` unset), so the 10,000-route case is the real one. */
const PRODUCTION_BODY_LIMIT = loadHubConfig({
  HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  HUB_SERVICE_TOKEN: randomBytes(32).toString('hex'),
}).HUB_BODY_LIMIT;

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub({ settings: { HUB_BODY_LIMIT: PRODUCTION_BODY_LIMIT } });
});
afterAll(() => t.close());

async function runtimeApi(owner: SeededMember) {
  return t.client({ apiKey: (await createKey(t, owner, { preset: 'agent-runtime' })).key });
}

async function heartbeat(owner: SeededMember, hostId: string, consoleRoutes?: ConsoleRoutes) {
  const api = await runtimeApi(owner);
  return api.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
    params: { path: { hostId } },
    body: {
      relay_ready: true,
      console_router_ready: true,
      runtime_version: '1.0.0',
      ...(consoleRoutes === undefined ? {} : { console_routes: consoleRoutes }),
    },
  });
}

async function agentView(owner: SeededMember, agentId: string) {
  return unwrap(
    await t.client({ token: owner.token }).GET('/api/v1/agents/{agentId}', { params: { path: { agentId } } }),
  );
}

async function networkHost(owner: SeededMember, hostId: string) {
  const view = unwrap(
    await t.client({ token: owner.token }).GET('/api/v1/workspaces/{workspace}/networks', {
      params: { path: { workspace: owner.workspace.slug } },
    }),
  );
  const host = view.hosts.find((h) => h.runtime_instance_id === hostId);
  if (!host) throw new Error(`host ${hostId} not in the Networks view`);
  return host;
}

async function storedActivity(agentId: string) {
  const row = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: agentId } });
  return row.consoleLastActivityAt;
}

describe('console activity with host heartbeats', () => {
  test('when a heartbeat carries console routes, then the agent view and the Networks view show each route’s last activity', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const recent = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7001 });
    const older = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7002 });
    const quiet = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7003 });
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: null });
    await t.seedAgent(owner.workspace.id, {
      runtimeInstanceId: host.id,
      servePort: 7004,
      status: 'evicted',
      evictedAt: new Date(),
    });
    const recentAt = minutesAgo(1).toISOString();
    const olderAt = minutesAgo(5).toISOString();
    const updatedBefore = (await t.database.prisma.agent.findUniqueOrThrow({ where: { id: recent.id } }))
      .updatedAt;

    const beat = await heartbeat(owner, host.id, [
      { agent_id: older.id, last_activity_at: olderAt },
      { agent_id: recent.id, last_activity_at: recentAt },
      { agent_id: quiet.id, last_activity_at: null },
    ]);
    expect(beat.response.status).toBe(200);

    expect((await agentView(owner, recent.id)).console_last_activity_at).toBe(recentAt);
    expect((await agentView(owner, older.id)).console_last_activity_at).toBe(olderAt);
    expect((await agentView(owner, quiet.id)).console_last_activity_at).toBeNull();
    const listed = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/workspaces/{workspace}/agents', {
        params: { path: { workspace: owner.workspace.slug } },
      }),
    );
    expect(listed.find((a) => a.id === recent.id)?.console_last_activity_at).toBe(recentAt);
    // Activity is not an edit of the agent.
    expect((await t.database.prisma.agent.findUniqueOrThrow({ where: { id: recent.id } })).updatedAt).toEqual(
      updatedBefore,
    );

    expect((await networkHost(owner, host.id)).console_activity).toEqual([
      { agent_id: recent.id, agent_name: recent.name, console_last_activity_at: recentAt },
      { agent_id: older.id, agent_name: older.name, console_last_activity_at: olderAt },
      { agent_id: quiet.id, agent_name: quiet.name, console_last_activity_at: null },
    ]);
  });

  test('when a later heartbeat reports an older time, then the stored value does not move back', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const agent = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7001 });
    const latest = minutesAgo(2).toISOString();
    unwrap(await heartbeat(owner, host.id, [{ agent_id: agent.id, last_activity_at: latest }]));
    unwrap(
      await heartbeat(owner, host.id, [
        { agent_id: agent.id, last_activity_at: minutesAgo(30).toISOString() },
      ]),
    );
    unwrap(await heartbeat(owner, host.id, [{ agent_id: agent.id, last_activity_at: null }]));
    expect((await agentView(owner, agent.id)).console_last_activity_at).toBe(latest);

    const newer = minutesAgo(1).toISOString();
    unwrap(await heartbeat(owner, host.id, [{ agent_id: agent.id, last_activity_at: newer }]));
    expect((await agentView(owner, agent.id)).console_last_activity_at).toBe(newer);
  });

  test('when a heartbeat names agents of another host, another workspace or nobody, then they are left unchanged', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const otherHost = await t.seedHost(owner.workspace.id);
    const mine = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7001 });
    const neighbour = await t.seedAgent(owner.workspace.id, {
      runtimeInstanceId: otherHost.id,
      servePort: 7001,
    });
    const unplaced = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: null, servePort: 7002 });
    const stranger = await t.seedMember('owner');
    const strangerHost = await t.seedHost(stranger.workspace.id);
    const foreign = await t.seedAgent(stranger.workspace.id, {
      runtimeInstanceId: strangerHost.id,
      servePort: 7001,
    });
    const at = minutesAgo(1).toISOString();

    const beat = await heartbeat(
      owner,
      host.id,
      [mine, neighbour, unplaced, foreign, { id: 'agt_doesnotexist' }].map((a) => ({
        agent_id: a.id,
        last_activity_at: at,
      })),
    );
    expect(beat.response.status).toBe(200);
    expect(await storedActivity(mine.id)).toEqual(new Date(at));
    expect(await storedActivity(neighbour.id)).toBeNull();
    expect(await storedActivity(unplaced.id)).toBeNull();
    expect(await storedActivity(foreign.id)).toBeNull();
    expect((await networkHost(owner, otherHost.id)).console_activity).toEqual([
      { agent_id: neighbour.id, agent_name: neighbour.name, console_last_activity_at: null },
    ]);
  });

  test('when a reported time is in the future beyond the clock skew, then it is recorded as the hub’s now', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const agent = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7001 });
    const before = Date.now();
    unwrap(
      await heartbeat(owner, host.id, [
        { agent_id: agent.id, last_activity_at: new Date(before + 3_600_000).toISOString() },
      ]),
    );
    const after = Date.now();
    const stored = (await storedActivity(agent.id))?.getTime() ?? 0;
    expect(stored).toBeGreaterThanOrEqual(before);
    expect(stored).toBeLessThanOrEqual(after);
  });

  test('when a heartbeat has no console routes, then every stored value stays as it is', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const agent = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7001 });
    const at = minutesAgo(3).toISOString();
    unwrap(await heartbeat(owner, host.id, [{ agent_id: agent.id, last_activity_at: at }]));
    unwrap(await heartbeat(owner, host.id));
    unwrap(await heartbeat(owner, host.id, []));
    expect((await agentView(owner, agent.id)).console_last_activity_at).toBe(at);
  });

  test('when a heartbeat carries 10,000 routes, then it fits the default body limit and is accepted in one request', async () => {
    expect(PRODUCTION_BODY_LIMIT).toBe('1mb');
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const agent = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7001 });
    const at = minutesAgo(1).toISOString();
    // Ids shaped like real agent ids; the host's one agent is among them.
    const routes: ConsoleRoutes = Array.from({ length: 10_000 }, (_, i) => ({
      agent_id: i === 4_321 ? agent.id : `agt_${String(i).padStart(26, '0')}`,
      last_activity_at: at,
    }));
    expect(JSON.stringify(routes).length).toBeLessThan(1024 * 1024);
    const beat = await heartbeat(owner, host.id, routes);
    expect(beat.response.status).toBe(200);
    expect(await storedActivity(agent.id)).toEqual(new Date(at));
  });

  test('when 10,000 routes carry ids at the 100-character limit, then the body exceeds the limit: 413 and nothing is recorded', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const agent = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, servePort: 7001 });
    const routes: ConsoleRoutes = Array.from({ length: 10_000 }, (_, i) => ({
      agent_id: i === 0 ? agent.id : `agt_${String(i).padStart(96, '0')}`,
      last_activity_at: minutesAgo(1).toISOString(),
    }));
    const beat = await heartbeat(owner, host.id, routes);
    expect(beat.response.status).toBe(413);
    expect(beat.error).toMatchObject({ code: 'payload_too_large' });
    expect(await storedActivity(agent.id)).toBeNull();
  });

  test('when a heartbeat carries more than 10,000 routes, then 400', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const routes: ConsoleRoutes = Array.from({ length: 10_001 }, (_, i) => ({
      agent_id: `a${i}`,
      last_activity_at: null,
    }));
    const beat = await heartbeat(owner, host.id, routes);
    expect(beat.response.status).toBe(400);
  });
});
