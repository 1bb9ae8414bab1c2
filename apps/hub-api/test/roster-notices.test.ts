import { createLogger, createRedis, subscribeCredentialNotices } from '@svc/service-kit';
import type { CredentialNotice, CredentialNoticeSubscription, Redis } from '@svc/service-kit';
import { eventually, testRedisUrl, uniqueQueuePrefix } from '@svc/testing';
import { markLostAgents } from '../src/use-cases/agents/mark-lost-agents';
import { createProject, createTeam, registerAgent } from './support/agents-fixtures';
import { startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

/**
 * Every use case that changes what `GET /internal/v1/projects/{id}/roster` answers announces `roster_changed`
 * for the workspace after its commit (decision 105), on the real Redis; changes that do not (a running agent's
 * heartbeat, a repeated stop) announce nothing.
 */
let t: TestHub;
let redis: Redis;
let subscription: CredentialNoticeSubscription;
const seen: CredentialNotice[] = [];

beforeAll(async () => {
  redis = createRedis(testRedisUrl(), { name: 'roster-notices-test' });
  const prefix = uniqueQueuePrefix('hubroster');
  t = await startTestHub({ settings: { HUB_MANAGED_PROVIDERS: ['local'] }, notices: { redis, prefix } });
  subscription = subscribeCredentialNotices({
    subscriber: redis.duplicate({ lazyConnect: true }),
    prefix,
    logger: createLogger({ name: 'roster-notices-test', level: 'silent' }),
    onNotice: (notice) => seen.push(notice),
  });
  await subscription.ready;
}, 30_000);

afterAll(async () => {
  await subscription.close();
  await t.close();
  await redis.quit();
});

/** How many roster notices of the workspace arrived so far. */
const rosterNotices = (workspaceId: string) =>
  seen.filter((n) => n.kind === 'roster_changed' && n.workspace_id === workspaceId).length;

/** Waits for the workspace's roster notices to reach `count`, then checks no more came. */
async function expectNotices(workspaceId: string, count: number) {
  await eventually(async () => rosterNotices(workspaceId) >= count, 5_000, `${count} roster notices`, {
    intervalMs: 10,
    describe: () => `${rosterNotices(workspaceId)} roster notices`,
  });
  expect(rosterNotices(workspaceId)).toBe(count);
}

async function offlineAgent(owner: SeededMember) {
  const host = await t.seedHost(owner.workspace.id);
  return registerAgent(t, { token: owner.token }, owner.workspace.slug, {
    runtime_instance_id: host.id,
    model: 'local/echo',
  });
}

describe('roster notices', () => {
  test('when an agent is registered, started, stopped, stopped again and evicted, then each change but the repeated stop is announced for its workspace', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const api = t.client({ token: owner.token });
    const agent = await offlineAgent(owner);
    await expectNotices(ws, 1);

    const path = { params: { path: { agentId: agent.id } } };
    const started = await api.POST('/api/v1/agents/{agentId}/start', {
      ...path,
      body: { launch_path: 'direct' },
    });
    expect(started.response.status).toBe(200);
    await expectNotices(ws, 2);

    expect((await api.POST('/api/v1/agents/{agentId}/stop', path)).response.status).toBe(200);
    await expectNotices(ws, 3);
    // Stopping a stopped agent changes nothing: no notice (the eviction's is the next one seen).
    expect((await api.POST('/api/v1/agents/{agentId}/stop', path)).response.status).toBe(200);
    expect((await api.POST('/api/v1/agents/{agentId}/evict', path)).response.status).toBe(200);
    await expectNotices(ws, 4);
    // Another workspace's changes are not announced as this one's.
    const other = await t.seedMember('owner');
    await offlineAgent(other);
    await expectNotices(other.workspace.id, 1);
    expect(rosterNotices(ws)).toBe(4);
  });

  test('when a stopped or long-silent agent heartbeats, then it is announced running again; when a running agent heartbeats, then nothing is announced', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const stopped = await t.seedAgent(ws, { status: 'offline' });
    const running = await t.seedAgent(ws);
    const beat = (token: string) =>
      t.client({ token }).POST('/api/v1/agents/me/heartbeat', { body: { status: 'idle' } });

    expect((await beat(running.token)).response.status).toBe(200);
    expect((await beat(stopped.token)).response.status).toBe(200);
    await expectNotices(ws, 1);
    expect((await beat(stopped.token)).response.status).toBe(200);
    expect((await beat(running.token)).response.status).toBe(200);
    // A change that is announced, after the two heartbeats: theirs would have come before it.
    await t.client({ token: owner.token }).POST('/api/v1/agents/{agentId}/stop', {
      params: { path: { agentId: running.id } },
    });
    await expectNotices(ws, 2);
    // Still `idle` but silent past the roster's freshness (the sweep has not marked it lost yet): back at once.
    const silent = await t.seedAgent(ws, { lastHeartbeatAt: new Date(Date.now() - 120_000) });
    expect((await beat(silent.token)).response.status).toBe(200);
    await expectNotices(ws, 3);
  });

  test('when the presence sweep marks an agent lost, then its workspace is announced', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    await t.seedAgent(ws, { lastHeartbeatAt: new Date(Date.now() - 120_000) });
    const sweep = await markLostAgents(t.hub.deps);
    expect(sweep.agents).toHaveLength(1);
    await expectNotices(ws, 1);
  });

  test('when a team gains or loses an agent or a project, then each change is announced and a repeated one is not', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const api = t.client({ token: owner.token });
    const agent = await t.seedAgent(ws);
    const team = await createTeam(t, owner);
    const project = await createProject(t, owner);
    const membership = { params: { path: { teamId: team.id, agentId: agent.id } } };
    const assignment = { params: { path: { projectId: project.id, teamId: team.id } } };

    expect((await api.PUT('/api/v1/teams/{teamId}/agents/{agentId}', membership)).response.status).toBe(200);
    await expectNotices(ws, 1);
    // Adding a member again changes nothing; the assignment's notice is the next one.
    expect((await api.PUT('/api/v1/teams/{teamId}/agents/{agentId}', membership)).response.status).toBe(200);
    const assigned = await api.POST('/api/v1/projects/{projectId}/teams', {
      params: { path: { projectId: project.id } },
      body: { team_id: team.id },
    });
    expect(assigned.response.status).toBe(201);
    await expectNotices(ws, 2);
    const roster = await t.internal().GET('/internal/v1/projects/{projectId}/roster', {
      params: { path: { projectId: project.id } },
    });
    expect(roster.data?.data.map((a) => a.agent_id)).toEqual([agent.id]);

    expect(
      (await api.DELETE('/api/v1/projects/{projectId}/teams/{teamId}', assignment)).response.status,
    ).toBe(200);
    await expectNotices(ws, 3);
    expect(
      (await api.DELETE('/api/v1/projects/{projectId}/teams/{teamId}', assignment)).response.status,
    ).toBe(200);
    expect((await api.DELETE('/api/v1/teams/{teamId}/agents/{agentId}', membership)).response.status).toBe(
      204,
    );
    await expectNotices(ws, 4);
  });
});
