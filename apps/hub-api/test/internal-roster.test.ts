import { poolCounts } from '@svc/db-kit';
import { newId } from '@svc/service-kit';
import { createKey, minutesAgo, SERVICE_TOKEN, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';
import type { Prisma } from '../src/generated/prisma/client';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

/** A team written directly, assigned to a project (or assigned and ended) when `assign` says so. */
async function teamOnProject(
  workspaceId: string,
  agentIds: string[],
  assign?: { projectId: string; unassigned?: boolean },
) {
  const team = await t.seedTeam(workspaceId, agentIds);
  if (assign) {
    await t.database.prisma.projectTeam.create({
      data: {
        projectId: assign.projectId,
        teamId: team.id,
        assignedAt: minutesAgo(60),
        unassignedAt: assign.unassigned ? minutesAgo(30) : null,
      },
    });
  }
  return team;
}

function agent(workspaceId: string, name: string, overrides: Partial<Prisma.AgentUncheckedCreateInput> = {}) {
  return t.seedAgent(workspaceId, { name, ...overrides });
}

function roster(projectId: string, query: { capability?: string[]; available_only?: boolean } = {}) {
  return t.internal().GET('/internal/v1/projects/{projectId}/roster', {
    params: { path: { projectId }, query },
  });
}

function readiness(projectId: string) {
  return t.internal().GET('/internal/v1/projects/{projectId}/runtime-readiness', {
    params: { path: { projectId } },
  });
}

/** The statements and transactions the hub's pool sent while `call` ran. */
async function statementsOf(call: () => Promise<unknown>) {
  const count = () => ({ ...poolCounts(t.database.pool)! });
  const before = count();
  await call();
  const after = count();
  return {
    statements: after.statements - before.statements,
    transactions: after.transactions - before.transactions,
  };
}

describe('internal: project', () => {
  test('when a service reads a project, then it gets code, name, workspace and whether it is archived', async () => {
    const owner = await t.seedMember('owner');
    const project = await t.seedProject(owner.workspace.id, 'OPS');
    const res = await t.internal().GET('/internal/v1/projects/{projectId}', {
      params: { path: { projectId: project.id } },
    });
    expect(res.data?.data).toEqual({
      id: project.id,
      code: 'OPS',
      name: 'Project OPS',
      workspace: { id: owner.workspace.id, slug: owner.workspace.slug },
      archived_at: null,
    });
  });

  test('when the project does not exist, then 404 project_not_found on every route; a malformed id is 400', async () => {
    const missing = newId('prj');
    const paths = [
      '/internal/v1/projects/{projectId}',
      '/internal/v1/projects/{projectId}/roster',
      '/internal/v1/projects/{projectId}/runtime-readiness',
    ] as const;
    for (const path of paths) {
      const res = await t.internal().GET(path, { params: { path: { projectId: missing } } });
      expect({ path, status: res.response.status, code: res.error?.code }).toEqual({
        path,
        status: 404,
        code: 'project_not_found',
      });
    }
    const bad = await fetch(`${t.url}/internal/v1/projects/not%20an%20id`, {
      headers: { 'x-svc-service-token': SERVICE_TOKEN },
    });
    expect(bad.status).toBe(400);
  });
});

describe('internal: roster', () => {
  let owner: SeededMember;
  let projectId: string;
  const ids: Record<string, string> = {};
  let activeTeam: string;
  let secondTeam: string;

  beforeAll(async () => {
    owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const project = await t.seedProject(ws);
    const otherProject = await t.seedProject(ws);
    projectId = project.id;
    const make = async (name: string, overrides: Partial<Prisma.AgentUncheckedCreateInput> = {}) => {
      ids[name] = (await agent(ws, name, overrides)).id;
      return ids[name] as string;
    };
    await make('busy-bee', { status: 'busy', capabilities: ['code', 'review'] });
    await make('idle-zed', { status: 'idle', capabilities: ['code', 'review', 'deploy'] });
    await make('idle-amy', { status: 'idle', capabilities: ['code'] });
    await make('online-own', { status: 'online', capabilities: ['code', 'review'], projectId: project.id });
    await make('online-stale', {
      status: 'online',
      capabilities: ['code', 'review'],
      lastHeartbeatAt: minutesAgo(10),
    });
    await make('offline-one', { status: 'offline', capabilities: ['code', 'review'], lastHeartbeatAt: null });
    await make('evicted-one', { status: 'evicted', capabilities: ['code', 'review'] });
    await make('ex-team-only', { status: 'idle', capabilities: ['code'] });
    await make('other-project', { status: 'idle', capabilities: ['code'] });
    await make('own-project-only', {
      status: 'offline',
      capabilities: [],
      projectId: project.id,
      runtimeInstanceId: null,
      lastHeartbeatAt: null,
    });
    activeTeam = (
      await teamOnProject(
        ws,
        ['busy-bee', 'idle-zed', 'online-own', 'online-stale', 'offline-one', 'evicted-one'].map(
          (n) => ids[n] as string,
        ),
        { projectId: project.id },
      )
    ).id;
    // A second active team sharing a member: the agent is listed once, with both teams.
    secondTeam = (
      await teamOnProject(ws, [ids['idle-zed'] as string, ids['idle-amy'] as string], { projectId })
    ).id;
    // Unassigned team and a team of another project: not on this roster.
    await teamOnProject(ws, [ids['ex-team-only'] as string], { projectId, unassigned: true });
    await teamOnProject(ws, [ids['other-project'] as string], { projectId: otherProject.id });
    // A team that is not assigned to anything.
    await teamOnProject(ws, [ids['other-project'] as string]);
  });

  test('when a service reads the roster, then active-team members and own-project agents are listed once, in status then name order', async () => {
    const res = await roster(projectId);
    expect(res.response.status).toBe(200);
    const entries = res.data?.data ?? [];
    expect(entries.map((e) => e.name)).toEqual([
      'idle-amy',
      'idle-zed',
      'online-own',
      'online-stale',
      'busy-bee',
      'offline-one',
      'own-project-only',
    ]);
    const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
    expect(byName['idle-zed']).toEqual({
      agent_id: ids['idle-zed'],
      name: 'idle-zed',
      status: 'idle',
      capabilities: ['code', 'review', 'deploy'],
      runtime_instance_id: expect.stringMatching(/^rti_/),
      last_heartbeat_at: expect.any(String),
      running: true,
      teams: [activeTeam, secondTeam].sort(),
    });
    expect(byName['online-own']?.teams).toEqual([activeTeam]);
    expect(byName['own-project-only']).toMatchObject({
      teams: [],
      running: false,
      runtime_instance_id: null,
      last_heartbeat_at: null,
    });
    // Running = online/idle/busy with a heartbeat at most 90 s old.
    expect(byName['busy-bee']?.running).toBe(true);
    expect(byName['online-stale']?.running).toBe(false);
    expect(byName['offline-one']?.running).toBe(false);
  });

  test('when capabilities are given, then only agents holding all of them', async () => {
    const review = await roster(projectId, { capability: ['review'] });
    expect(review.data?.data.map((e) => e.name)).toEqual([
      'idle-zed',
      'online-own',
      'online-stale',
      'busy-bee',
      'offline-one',
    ]);
    const both = await roster(projectId, { capability: ['review', 'deploy'] });
    expect(both.data?.data.map((e) => e.name)).toEqual(['idle-zed']);
    const none = await roster(projectId, { capability: ['review', 'telepathy'] });
    expect(none.data?.data).toEqual([]);
    // The raw query string form, one parameter repeated.
    const raw = await fetch(
      `${t.url}/internal/v1/projects/${projectId}/roster?capability=code&capability=deploy`,
      { headers: { 'x-svc-service-token': SERVICE_TOKEN } },
    );
    expect(((await raw.json()) as { data: { name: string }[] }).data.map((e) => e.name)).toEqual([
      'idle-zed',
    ]);
  });

  test('when available_only is set, then only running agents that are idle or online', async () => {
    const res = await roster(projectId, { available_only: true });
    expect(res.data?.data.map((e) => e.name)).toEqual(['idle-amy', 'idle-zed', 'online-own']);
    expect(res.data?.data.every((e) => e.running)).toBe(true);
    const withCapability = await roster(projectId, { available_only: true, capability: ['review'] });
    expect(withCapability.data?.data.map((e) => e.name)).toEqual(['idle-zed', 'online-own']);
  });

  test('when the roster is read, with or without filters, then one statement answers it (decision 97)', async () => {
    expect(await statementsOf(() => roster(projectId))).toEqual({ statements: 1, transactions: 1 });
    expect(
      await statementsOf(() => roster(projectId, { available_only: true, capability: ['review'] })),
    ).toEqual({ statements: 1, transactions: 1 });
    expect(await statementsOf(() => roster('prj_missing'))).toEqual({ statements: 1, transactions: 1 });
  });

  test('when a project has no teams and no agents, then the roster is empty', async () => {
    const project = await t.seedProject(owner.workspace.id);
    expect((await roster(project.id)).data?.data).toEqual([]);
  });

  test('when a project has no teams, then its own agents are the roster, with no teams', async () => {
    const project = await t.seedProject(owner.workspace.id);
    const own = await agent(owner.workspace.id, 'solo-own', { status: 'idle', projectId: project.id });
    const res = await roster(project.id);
    expect(res.data?.data).toEqual([
      expect.objectContaining({ agent_id: own.id, teams: [], running: true, status: 'idle' }),
    ]);
  });

  test('when a team of another workspace is linked to the project, then its agents stay off the roster', async () => {
    const stranger = await t.seedMember('owner');
    const project = await t.seedProject(owner.workspace.id);
    const foreign = await agent(stranger.workspace.id, 'foreign-agent', { status: 'idle' });
    await teamOnProject(stranger.workspace.id, [foreign.id], { projectId: project.id });
    expect((await roster(project.id)).data?.data).toEqual([]);
  });
});

describe('internal: runtime readiness', () => {
  test('when the workspace has no host and the roster is empty, then not ready with no_runtime_host', async () => {
    const owner = await t.seedMember('owner');
    const project = await t.seedProject(owner.workspace.id);
    const res = await readiness(project.id);
    expect(res.data?.data).toEqual({
      project_id: project.id,
      workspace_id: owner.workspace.id,
      scope: 'workspace',
      ready: false,
      blockers: [
        {
          code: 'no_runtime_host',
          message: expect.any(String),
          recommended_action: expect.stringContaining('svc runtime up'),
          runtime_instance_ids: [],
        },
      ],
      hosts: [],
    });
  });

  test('when the roster is empty but the workspace has a ready host, then ready in workspace scope', async () => {
    const owner = await t.seedMember('owner');
    const project = await t.seedProject(owner.workspace.id);
    const host = await t.seedHost(owner.workspace.id, { name: 'alpha' });
    const res = await readiness(project.id);
    expect(res.data?.data).toMatchObject({ scope: 'workspace', ready: true, blockers: [] });
    expect(res.data?.data.hosts).toEqual([
      {
        runtime_instance_id: host.id,
        name: 'alpha',
        hostname: null,
        last_heartbeat_at: expect.any(String),
        ready: true,
        readiness: {
          heartbeat_fresh: true,
          relay_ready: true,
          console_router_ready: true,
          relay_state: 'ready',
          console_router_state: 'ready',
          spawn_ready: true,
          reasons: [],
          causes: [],
          runtime_key: expect.objectContaining({ state: expect.any(String) }),
        },
        running_agents: 0,
        roster_agents: 0,
      },
    ]);
  });

  test("when the roster's hosts are stale or have relay and console down, then typed blockers name each host", async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const project = await t.seedProject(ws);
    const stale = await t.seedHost(ws, { name: 'stale', lastHeartbeatAt: minutesAgo(5), relayReady: false });
    const noRelay = await t.seedHost(ws, { name: 'no-relay', relayReady: false });
    const noConsole = await t.seedHost(ws, { name: 'no-console', consoleRouterReady: false });
    // A ready host of the workspace that no roster agent uses does not count.
    await t.seedHost(ws, { name: 'unrelated-ready' });
    const agents = [
      await agent(ws, 'a-stale', { runtimeInstanceId: stale.id, status: 'idle' }),
      await agent(ws, 'a-relay', { runtimeInstanceId: noRelay.id, status: 'idle' }),
      await agent(ws, 'a-console', { runtimeInstanceId: noConsole.id, status: 'busy' }),
    ];
    await teamOnProject(
      ws,
      agents.map((a) => a.id),
      { projectId: project.id },
    );

    const data = (await readiness(project.id)).data?.data;
    expect(data).toMatchObject({ scope: 'roster', ready: false });
    expect(data?.blockers.map((b) => [b.code, b.runtime_instance_ids])).toEqual([
      ['runtime_host_stale', [stale.id]],
      ['relay_not_ready', [noRelay.id]],
      ['console_router_not_ready', [noConsole.id]],
    ]);
    for (const blocker of data?.blockers ?? []) {
      expect(blocker.message.length).toBeGreaterThan(10);
      expect(blocker.recommended_action.length).toBeGreaterThan(10);
    }
    expect(data?.hosts.map((h) => h.name)).toEqual(['no-console', 'no-relay', 'stale']);
    expect(data?.hosts.find((h) => h.name === 'stale')?.readiness).toMatchObject({
      heartbeat_fresh: false,
      spawn_ready: false,
    });
    expect(data?.hosts.find((h) => h.name === 'no-console')).toMatchObject({
      ready: false,
      running_agents: 1,
      roster_agents: 1,
      readiness: { spawn_ready: true, console_router_ready: false },
    });
  });

  test('when one roster host is ready, then ready without blockers, ready hosts first, with running and roster counts', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const project = await t.seedProject(ws);
    const good = await t.seedHost(ws, { name: 'zulu-good' });
    const stale = await t.seedHost(ws, { name: 'alpha-stale', lastHeartbeatAt: minutesAgo(5) });
    const onGood = [
      await agent(ws, 'g1', { runtimeInstanceId: good.id, status: 'idle' }),
      await agent(ws, 'g2', { runtimeInstanceId: good.id, status: 'offline' }),
    ];
    const onStale = await agent(ws, 's1', { runtimeInstanceId: stale.id, projectId: project.id });
    // Running on the good host but not on the roster: counted as running there, not as roster.
    await agent(ws, 'g-outsider', { runtimeInstanceId: good.id, status: 'busy' });
    await teamOnProject(
      ws,
      onGood.map((a) => a.id),
      { projectId: project.id },
    );

    const data = (await readiness(project.id)).data?.data;
    expect(data).toMatchObject({ scope: 'roster', ready: true, blockers: [] });
    expect(data?.hosts.map((h) => [h.name, h.ready, h.running_agents, h.roster_agents])).toEqual([
      ['zulu-good', true, 2, 2],
      ['alpha-stale', false, 1, 1],
    ]);
    expect(onStale.runtimeInstanceId).toBe(stale.id);
    // The project with its roster, then the hosts with their running agents (decision 97).
    expect(await statementsOf(() => readiness(project.id))).toEqual({ statements: 2, transactions: 2 });
  });

  test('when hosts are reported, then no relay token or other secret is in the answer or the logs', async () => {
    const owner = await t.seedMember('owner');
    const project = await t.seedProject(owner.workspace.id);
    const host = await t.seedHost(owner.workspace.id);
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    await t.database.prisma.runtimeHost.update({ where: { id: host.id }, data: { runtimeApiKeyId: key.id } });
    const res = await readiness(project.id);
    const row = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } });
    const body = JSON.stringify(res.data);
    for (const secret of [host.relayToken, row.relayTokenHash, row.relayTokenCiphertext, key.key]) {
      expect(body).not.toContain(secret);
      expect(t.logs.join('')).not.toContain(host.relayToken);
    }
  });
});

describe('internal: who may call', () => {
  test('when a workspace API key, a participant or an agent calls, then 403; without credential 401; a wrong service token 401', async () => {
    const owner = await t.seedMember('owner');
    const project = await t.seedProject(owner.workspace.id);
    const key = await createKey(t, owner, { preset: 'automation' });
    const seeded = await agent(owner.workspace.id, 'caller-agent');
    const urls = [
      `/internal/v1/projects/${project.id}`,
      `/internal/v1/projects/${project.id}/roster`,
      `/internal/v1/projects/${project.id}/runtime-readiness`,
    ];
    for (const url of urls) {
      const refused: Record<string, string>[] = [
        { 'x-api-key': key.key },
        { authorization: `Bearer ${owner.token}` },
        { authorization: `Bearer ${seeded.token}` },
      ];
      for (const headers of refused) {
        expect({ url, status: (await fetch(`${t.url}${url}`, { headers })).status }).toEqual({
          url,
          status: 403,
        });
      }
      expect((await fetch(`${t.url}${url}`)).status).toBe(401);
      const wrong = await fetch(`${t.url}${url}`, {
        headers: { 'x-svc-service-token': `${SERVICE_TOKEN}x` },
      });
      expect(wrong.status).toBe(401);
    }
    const viaWrongClient = await t
      .internal('svs_not-the-token-at-all-000000000000000000')
      .GET('/internal/v1/projects/{projectId}', { params: { path: { projectId: project.id } } });
    expect(viaWrongClient.response.status).toBe(401);
  });
});

describe('internal: workspace member', () => {
  function member(workspaceId: string, participantId: string, serviceToken?: string) {
    return t.internal(serviceToken).GET('/internal/v1/workspaces/{workspaceId}/members/{participantId}', {
      params: { path: { workspaceId, participantId } },
    });
  }

  test('when a service reads a membership, then it gets the workspace, participant, email and role', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const admin = await t.seedMember('admin', owner.workspace);
    const res = await member(owner.workspace.id, viewer.participantId);
    expect(res.response.status).toBe(200);
    expect(res.data?.data).toEqual({
      workspace_id: owner.workspace.id,
      participant_id: viewer.participantId,
      email: viewer.email,
      role: 'viewer',
    });
    expect((await member(owner.workspace.id, admin.participantId)).data?.data.role).toBe('admin');
    expect((await member(owner.workspace.id, owner.participantId)).data?.data.role).toBe('owner');
  });

  test('when the participant belongs to another workspace only, then 404 member_not_found', async () => {
    const owner = await t.seedMember('owner');
    const stranger = await t.seedMember('owner');
    const res = await member(owner.workspace.id, stranger.participantId);
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 404,
      code: 'member_not_found',
    });
    expect(res.response.headers.get('content-type')).toContain('application/problem+json');
    // The stranger is still a member of their own workspace.
    expect((await member(stranger.workspace.id, stranger.participantId)).data?.data.role).toBe('owner');
  });

  test('when the membership was removed, then 404 member_not_found', async () => {
    const owner = await t.seedMember('owner');
    const leaving = await t.seedMember('member', owner.workspace);
    expect((await member(owner.workspace.id, leaving.participantId)).response.status).toBe(200);
    const removed = await t
      .client({ token: owner.token })
      .DELETE('/api/v1/workspaces/{workspace}/members/{participantId}', {
        params: { path: { workspace: owner.workspace.slug, participantId: leaving.participantId } },
      });
    expect(removed.response.ok).toBe(true);
    const res = await member(owner.workspace.id, leaving.participantId);
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 404,
      code: 'member_not_found',
    });
  });

  test('when the workspace or the participant is unknown, then 404 member_not_found; a malformed id is 400', async () => {
    const owner = await t.seedMember('owner');
    const pairs: [string, string][] = [
      [newId('ws'), owner.participantId],
      [owner.workspace.id, newId('prt')],
      [newId('ws'), newId('prt')],
      // A slug is not an id here.
      [owner.workspace.slug.replace('-', '_'), owner.participantId],
    ];
    for (const [workspaceId, participantId] of pairs) {
      const res = await member(workspaceId, participantId);
      expect({ workspaceId, participantId, status: res.response.status, code: res.error?.code }).toEqual({
        workspaceId,
        participantId,
        status: 404,
        code: 'member_not_found',
      });
    }
    const bad = await fetch(`${t.url}/internal/v1/workspaces/not%20an%20id/members/${owner.participantId}`, {
      headers: { 'x-svc-service-token': SERVICE_TOKEN },
    });
    expect(bad.status).toBe(400);
  });

  test('when a workspace API key, a participant or an agent calls, then 403; without credential or with a wrong service token 401', async () => {
    const owner = await t.seedMember('owner');
    const key = await createKey(t, owner, { preset: 'automation' });
    const seeded = await agent(owner.workspace.id, 'member-caller-agent');
    const url = `${t.url}/internal/v1/workspaces/${owner.workspace.id}/members/${owner.participantId}`;
    const refused: Record<string, string>[] = [
      { 'x-api-key': key.key },
      { authorization: `Bearer ${owner.token}` },
      { authorization: `Bearer ${seeded.token}` },
    ];
    for (const headers of refused) {
      const res = await fetch(url, { headers });
      const body = (await res.json()) as { code?: string };
      expect({ status: res.status, code: body.code }).toEqual({ status: 403, code: 'actor_not_allowed' });
      expect(JSON.stringify(body)).not.toContain(owner.email);
    }
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { 'x-svc-service-token': `${SERVICE_TOKEN}x` } })).status).toBe(401);
    const viaWrongClient = await member(
      owner.workspace.id,
      owner.participantId,
      'svs_not-the-token-at-all-000000000000000000',
    );
    expect(viaWrongClient.response.status).toBe(401);
  });
});
