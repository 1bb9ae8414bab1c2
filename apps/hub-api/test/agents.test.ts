import { unwrap } from '@svc/contracts';
import { agentName, auditRows, createProject, createTeam, registerAgent } from './support/agents-fixtures';
import { createKey, startTestHub } from './support/harness';
import type { SeededHost, SeededMember, TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
}, 30_000);
afterAll(() => t.close());

async function ownerWithHost(): Promise<{ owner: SeededMember; host: SeededHost }> {
  const owner = await t.seedMember('owner');
  return { owner, host: await t.seedHost(owner.workspace.id) };
}

function register(
  caller: { token?: string; apiKey?: string },
  workspace: string,
  body: Record<string, unknown>,
) {
  return t.client(caller).POST('/api/v1/workspaces/{workspace}/agents', {
    params: { path: { workspace } },
    body: { name: agentName(), ...body } as never,
  });
}

describe('agent registration', () => {
  test('when an owner registers a workdir agent, then it is offline on the rti_ host with sorted capabilities and a default console route', async () => {
    const { owner, host } = await ownerWithHost();
    const agent = unwrap(
      await register({ token: owner.token }, owner.workspace.slug, {
        name: 'builder-1',
        runtime_instance_id: host.id,
        workdir: '/srv/agents/builder-1/',
        capabilities: ['test', 'code', 'test', 'review'],
        serve_port: 4341,
        model: 'anthropic/claude-sonnet-4-5',
      }),
    );
    expect(agent).toMatchObject({
      name: 'builder-1',
      workspace_id: owner.workspace.id,
      status: 'offline',
      runtime_instance_id: host.id,
      workdir: '/srv/agents/builder-1',
      project_id: null,
      capabilities: ['code', 'review', 'test'],
      serve_port: 4341,
      console_route: `/${owner.workspace.slug}/agents/${agent.id}`,
      model: 'anthropic/claude-sonnet-4-5',
      started_at: null,
      last_heartbeat_at: null,
    });
    expect(agent.id).toMatch(/^agt_/);
    const [audit] = await auditRows(t, 'agent.registered', agent.id);
    expect(audit).toMatchObject({
      actorKind: 'participant',
      workspaceId: owner.workspace.id,
      data: expect.objectContaining({ name: 'builder-1', runtime_instance_id: host.id }),
    });
  });

  test('when the agent-runtime key registers a worker with a project and a team, then the agent joins the team', async () => {
    const { owner, host } = await ownerWithHost();
    const project = await createProject(t, owner);
    const team = await createTeam(t, owner);
    const runtime = await createKey(t, owner, { preset: 'agent-runtime' });
    const agent = unwrap(
      await register({ apiKey: runtime.key }, owner.workspace.id, {
        runtime_instance_id: host.id,
        project_code: project.code,
        team_id: team.id,
        worker: true,
        console_route: '/custom/route',
      }),
    );
    expect(agent).toMatchObject({ project_id: project.id, workdir: null, console_route: '/custom/route' });
    const detail = unwrap(
      await t
        .client({ token: owner.token })
        .GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } } }),
    );
    expect(detail.agents.map((a) => a.agent_id)).toEqual([agent.id]);
    const [audit] = await auditRows(t, 'agent.registered', agent.id);
    expect(audit).toMatchObject({ actorKind: 'api_key', actorId: runtime.id });
    expect(await auditRows(t, 'team.agent_added', team.id)).toHaveLength(1);
  });

  test('when the runtime id is a bundle id (wrt_), then 400 runtime_bundle_id_not_allowed says to use the rti_ inventory id', async () => {
    const { owner } = await ownerWithHost();
    const res = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: 'wrt_01jd5x7c9q8w2e4r6t8y0u2i4o',
      workdir: '/srv/agents/x',
    });
    expect(res.response.status).toBe(400);
    expect(res.error?.code).toBe('runtime_bundle_id_not_allowed');
    expect(res.error?.detail).toContain('rti_');
    expect(res.error?.detail).toMatch(/inventory id/);
    expect(await t.database.prisma.agent.count({ where: { workspaceId: owner.workspace.id } })).toBe(0);
  });

  test('when the runtime id is a host of another workspace or malformed, then 400', async () => {
    const { owner } = await ownerWithHost();
    const other = await t.seedMember('owner');
    const foreignHost = await t.seedHost(other.workspace.id);
    const foreign = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: foreignHost.id,
      workdir: '/srv/agents/x',
    });
    expect(foreign.error?.code).toBe('runtime_host_not_found');
    const malformed = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: 'host-1',
      workdir: '/srv/agents/x',
    });
    expect(malformed.error?.code).toBe('runtime_instance_id_invalid');
  });

  test('when the model is not an exact catalog identifier, then 400 provider_model_unsupported with close matches', async () => {
    const { owner, host } = await ownerWithHost();
    const res = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      workdir: '/srv/agents/x',
      model: 'claude-sonnet-4-5',
    });
    expect(res.response.status).toBe(400);
    expect(res.error?.code).toBe('provider_model_unsupported');
    const closeMatches = (res.error as { close_matches?: string[] }).close_matches;
    expect(closeMatches?.[0]).toBe('anthropic/claude-sonnet-4-5');
    expect(closeMatches?.length).toBeLessThanOrEqual(3);
    expect(res.error?.detail).toMatch(/exact identifier from the current catalog/);
    expect(res.error?.detail).toMatch(/no aliases/);

    await t.database.prisma.providerModel.update({
      where: { id: 'openai/gpt-4.1' },
      data: { active: false },
    });
    const retired = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      workdir: '/srv/agents/y',
      model: 'openai/gpt-4.1',
    });
    expect(retired.error?.code).toBe('provider_model_unsupported');
    await t.database.prisma.providerModel.update({ where: { id: 'openai/gpt-4.1' }, data: { active: true } });
  });

  test('when both project_code and workdir (or neither) are given, then 400', async () => {
    const { owner, host } = await ownerWithHost();
    const project = await createProject(t, owner);
    const both = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      project_code: project.code,
      workdir: '/srv/agents/x',
    });
    expect(both.response.status).toBe(400);
    expect(both.error?.code).toBe('project_and_workdir_exclusive');
    expect(both.error?.detail).toMatch(/never both/);
    const neither = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
    });
    expect(neither.error?.code).toBe('project_or_workdir_required');
  });

  test('when a worker lacks a team, or the project or team is unknown, then 400', async () => {
    const { owner, host } = await ownerWithHost();
    const project = await createProject(t, owner);
    const noTeam = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      project_code: project.code,
      worker: true,
    });
    expect(noTeam.error?.code).toBe('worker_requires_project_and_team');
    const unknownProject = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      project_code: 'NOPE',
    });
    expect(unknownProject.error?.code).toBe('project_not_found');
    const otherOwner = await t.seedMember('owner');
    const foreignTeam = await createTeam(t, otherOwner);
    const unknownTeam = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      project_code: project.code,
      team_id: foreignTeam.id,
    });
    expect(unknownTeam.error?.code).toBe('team_not_found');
  });

  test('when the workdir is relative or outside the host workdir_root, then 400 workdir_outside_root', async () => {
    const { owner, host } = await ownerWithHost();
    for (const workdir of ['agents/x', '/srv/other', '/srv/agents', '/srv/agents/../etc', '/srv/agentsx/y']) {
      const res = await register({ token: owner.token }, owner.workspace.slug, {
        runtime_instance_id: host.id,
        workdir,
      });
      expect({ workdir, code: res.error?.code }).toEqual({ workdir, code: 'workdir_outside_root' });
    }
    const nested = unwrap(
      await register({ token: owner.token }, owner.workspace.slug, {
        runtime_instance_id: host.id,
        workdir: '/srv/agents/a/./b/../c',
      }),
    );
    expect(nested.workdir).toBe('/srv/agents/a/c');
  });

  test('when the host workdir_root is a Windows path, then Windows workdirs under it are accepted', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id, { workdirRoot: 'D:\\agents' });
    const ok = unwrap(
      await register({ token: owner.token }, owner.workspace.slug, {
        runtime_instance_id: host.id,
        workdir: 'd:\\Agents\\builder',
      }),
    );
    expect(ok.workdir).toBe('d:\\Agents\\builder');
    const outside = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      workdir: 'D:\\other',
    });
    expect(outside.error?.code).toBe('workdir_outside_root');
  });

  test('when the name, serve port or console route is taken, then 409; evicted agents and other hosts free them', async () => {
    const { owner, host } = await ownerWithHost();
    const secondHost = await t.seedHost(owner.workspace.id);
    const first = unwrap(
      await register({ token: owner.token }, owner.workspace.slug, {
        name: 'unique-name',
        runtime_instance_id: host.id,
        workdir: '/srv/agents/a',
        serve_port: 4400,
        console_route: '/team/a',
      }),
    );
    const sameName = await register({ token: owner.token }, owner.workspace.slug, {
      name: 'unique-name',
      runtime_instance_id: secondHost.id,
      workdir: '/srv/agents/b',
    });
    expect(sameName.response.status).toBe(409);
    expect(sameName.error?.code).toBe('agent_name_taken');
    const samePort = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      workdir: '/srv/agents/b',
      serve_port: 4400,
    });
    expect(samePort.response.status).toBe(409);
    expect(samePort.error?.code).toBe('serve_port_taken');
    const sameRoute = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      workdir: '/srv/agents/b',
      console_route: '/team/a',
    });
    expect(sameRoute.error?.code).toBe('console_route_taken');
    const otherHost = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: secondHost.id,
      workdir: '/srv/agents/b',
      serve_port: 4400,
    });
    expect(otherHost.response.status).toBe(201);

    await t.database.prisma.agent.update({ where: { id: first.id }, data: { status: 'evicted' } });
    const afterEviction = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      workdir: '/srv/agents/c',
      serve_port: 4400,
    });
    expect(afterEviction.response.status).toBe(201);
  });

  test('when two agents claim one serve port at the same time, then exactly one wins', async () => {
    const { owner, host } = await ownerWithHost();
    const results = await Promise.all(
      [1, 2, 3].map((i) =>
        register({ token: owner.token }, owner.workspace.slug, {
          runtime_instance_id: host.id,
          workdir: `/srv/agents/race-${i}`,
          serve_port: 5000,
        }),
      ),
    );
    expect(results.map((r) => r.response.status).sort()).toEqual([201, 409, 409]);
  });

  test('when a member, a viewer or a read-only key registers, then 403', async () => {
    const { owner, host } = await ownerWithHost();
    const member = await t.seedMember('member', owner.workspace);
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const body = { runtime_instance_id: host.id, workdir: '/srv/agents/x' };
    const byMember = await register({ token: member.token }, owner.workspace.slug, body);
    expect(byMember.error?.code).toBe('role_forbidden');
    const byKey = await register({ apiKey: readOnly.key }, owner.workspace.slug, body);
    expect(byKey.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['agents:write'] });
  });

  test('when the name breaks the pattern or the serve port is out of range, then 400 names the field', async () => {
    const { owner, host } = await ownerWithHost();
    const badName = await register({ token: owner.token }, owner.workspace.slug, {
      name: 'Has_Caps',
      runtime_instance_id: host.id,
      workdir: '/srv/agents/x',
    });
    expect(badName.error?.errors?.[0]?.location).toBe('body/name');
    const badPort = await register({ token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      workdir: '/srv/agents/x',
      serve_port: 80,
    });
    expect(badPort.error?.errors?.[0]?.location).toBe('body/serve_port');
  });
});

describe('agent reads', () => {
  test('when agents are listed, then the filters by status, runtime host and team apply', async () => {
    const { owner, host } = await ownerWithHost();
    const otherHost = await t.seedHost(owner.workspace.id);
    const team = await createTeam(t, owner);
    const a = await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
    });
    const b = await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: otherHost.id,
    });
    await t.database.prisma.agent.update({ where: { id: b.id }, data: { status: 'busy' } });
    unwrap(
      await t.client({ token: owner.token }).PUT('/api/v1/teams/{teamId}/agents/{agentId}', {
        params: { path: { teamId: team.id, agentId: a.id } },
      }),
    );
    const reader = await createKey(t, owner, { preset: 'read-only' });
    const api = t.client({ apiKey: reader.key });
    const list = async (query: Record<string, string>) =>
      unwrap(
        await api.GET('/api/v1/workspaces/{workspace}/agents', {
          params: { path: { workspace: owner.workspace.slug }, query },
        }),
      ).map((x) => x.id);
    expect(await list({})).toEqual([a.id, b.id]);
    expect(await list({ status: 'busy' })).toEqual([b.id]);
    expect(await list({ runtime_instance_id: host.id })).toEqual([a.id]);
    expect(await list({ team_id: team.id })).toEqual([a.id]);
    const bundle = await api.GET('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: owner.workspace.slug }, query: { runtime_instance_id: 'wrt_abc' } },
    });
    expect(bundle.error?.code).toBe('runtime_bundle_id_not_allowed');
    const badStatus = await api.GET('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: owner.workspace.slug }, query: { status: 'sleeping' as never } },
    });
    expect(badStatus.response.status).toBe(400);
  });

  test("when someone reads another workspace's agent by id, then it is not found; a viewer reads its own", async () => {
    const { owner, host } = await ownerWithHost();
    const viewer = await t.seedMember('viewer', owner.workspace);
    const stranger = await t.seedMember('owner');
    const agent = await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
    });
    const path = { path: { agentId: agent.id } };
    expect(
      unwrap(await t.client({ token: viewer.token }).GET('/api/v1/agents/{agentId}', { params: path })),
    ).toEqual(agent);
    const strangerKey = await createKey(t, stranger, { preset: 'read-only' });
    for (const caller of [{ token: stranger.token }, { apiKey: strangerKey.key }]) {
      const res = await t.client(caller).GET('/api/v1/agents/{agentId}', { params: path });
      expect(res.response.status).toBe(404);
      expect(res.error?.code).toBe('agent_not_found');
    }
  });
});
