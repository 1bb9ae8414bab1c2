import { unwrap } from '@svc/contracts';
import { auditRows, createProject, createTeam, registerAgent } from './support/agents-fixtures';
import { createKey, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
}, 30_000);
afterAll(() => t.close());

describe('teams', () => {
  test('when a member creates a team, then it is listed, readable by id and audited, and a duplicate name is 409', async () => {
    const member = await t.seedMember('member');
    const api = t.client({ token: member.token });
    const params = { path: { workspace: member.workspace.slug } };
    const team = unwrap(
      await api.POST('/api/v1/workspaces/{workspace}/teams', { params, body: { name: 'Core' } }),
    );
    expect(team).toMatchObject({ name: 'Core', workspace_id: member.workspace.id });
    expect(team.id).toMatch(/^team_/);

    const list = unwrap(await api.GET('/api/v1/workspaces/{workspace}/teams', { params }));
    expect(list.map((x) => x.id)).toEqual([team.id]);
    const detail = unwrap(await api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } } }));
    expect(detail).toMatchObject({ id: team.id, agents: [], participants: [], projects: [] });

    const dup = await api.POST('/api/v1/workspaces/{workspace}/teams', { params, body: { name: 'Core' } });
    expect(dup.response.status).toBe(409);
    expect(dup.error?.code).toBe('team_name_taken');

    const [audit] = await auditRows(t, 'team.created', team.id);
    expect(audit).toMatchObject({
      actorKind: 'participant',
      actorId: member.participantId,
      data: { name: 'Core' },
    });
  });

  test('when an automation key creates a team, then it works; a read-only key and a viewer are refused', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const params = { path: { workspace: owner.workspace.slug } };
    const automation = await createKey(t, owner, { preset: 'automation' });
    const created = await t
      .client({ apiKey: automation.key })
      .POST('/api/v1/workspaces/{workspace}/teams', { params, body: { name: 'Bots' } });
    expect(created.response.status).toBe(201);
    const [audit] = await auditRows(t, 'team.created', created.data?.data.id);
    expect(audit).toMatchObject({ actorKind: 'api_key', actorId: automation.id });

    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const byKey = await t
      .client({ apiKey: readOnly.key })
      .POST('/api/v1/workspaces/{workspace}/teams', { params, body: { name: 'Nope' } });
    expect(byKey.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['teams:write'] });
    const listed = await t
      .client({ apiKey: readOnly.key })
      .GET('/api/v1/workspaces/{workspace}/teams', { params });
    expect(listed.data?.data.map((x) => x.name)).toEqual(['Bots']);

    const byViewer = await t
      .client({ token: viewer.token })
      .POST('/api/v1/workspaces/{workspace}/teams', { params, body: { name: 'Nope' } });
    expect(byViewer.error?.code).toBe('role_forbidden');
    const readByViewer = await t
      .client({ token: viewer.token })
      .GET('/api/v1/teams/{teamId}', { params: { path: { teamId: created.data!.data.id } } });
    expect(readByViewer.response.status).toBe(200);
  });

  test('when the name is blank or unknown fields are sent, then 400', async () => {
    const member = await t.seedMember('member');
    const params = { path: { workspace: member.workspace.slug } };
    const blank = await t
      .client({ token: member.token })
      .POST('/api/v1/workspaces/{workspace}/teams', { params, body: { name: '   ' } });
    expect(blank.error?.errors?.[0]?.location).toBe('body/name');
    const extra = await fetch(`${t.url}/api/v1/workspaces/${member.workspace.slug}/teams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ok', color: 'red' }),
    });
    expect(extra.status).toBe(400);
    expect(((await extra.json()) as { errors: { location: string }[] }).errors[0]?.location).toBe(
      'body/color',
    );
  });

  test("when someone reads or changes another workspace's team, then it is not found", async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    const team = await createTeam(t, a);
    const host = await t.seedHost(b.workspace.id);
    const bAgent = await registerAgent(t, { token: b.token }, b.workspace.slug, {
      runtime_instance_id: host.id,
    });
    const teamPath = { path: { teamId: team.id } };
    const byParticipant = await t
      .client({ token: b.token })
      .GET('/api/v1/teams/{teamId}', { params: teamPath });
    expect(byParticipant.response.status).toBe(404);
    expect(byParticipant.error?.code).toBe('team_not_found');
    const keyB = await createKey(t, b, { preset: 'automation' });
    const byKey = await t.client({ apiKey: keyB.key }).GET('/api/v1/teams/{teamId}', { params: teamPath });
    expect(byKey.response.status).toBe(404);
    const put = await t.client({ apiKey: keyB.key }).PUT('/api/v1/teams/{teamId}/agents/{agentId}', {
      params: { path: { teamId: team.id, agentId: bAgent.id } },
    });
    expect(put.error?.code).toBe('team_not_found');
    expect(await t.database.prisma.teamAgent.count({ where: { teamId: team.id } })).toBe(0);
  });
});

describe('team membership', () => {
  test('when an agent is added twice and removed twice, then both are idempotent and each change is audited once', async () => {
    const member = await t.seedMember('member');
    const owner = await t.seedMember('owner', member.workspace);
    const host = await t.seedHost(member.workspace.id);
    const agent = await registerAgent(t, { token: owner.token }, member.workspace.slug, {
      runtime_instance_id: host.id,
    });
    const team = await createTeam(t, member);
    const api = t.client({ token: member.token });
    const path = { path: { teamId: team.id, agentId: agent.id } };
    const first = unwrap(await api.PUT('/api/v1/teams/{teamId}/agents/{agentId}', { params: path }));
    const second = unwrap(await api.PUT('/api/v1/teams/{teamId}/agents/{agentId}', { params: path }));
    expect(first).toMatchObject({
      team_id: team.id,
      agent_id: agent.id,
      name: agent.name,
      status: 'offline',
    });
    expect(second).toEqual(first);
    const detail = unwrap(await api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } } }));
    expect(detail.agents.map((a) => a.agent_id)).toEqual([agent.id]);
    expect(await auditRows(t, 'team.agent_added', team.id)).toHaveLength(1);

    for (let i = 0; i < 2; i += 1) {
      const removed = await api.DELETE('/api/v1/teams/{teamId}/agents/{agentId}', { params: path });
      expect(removed.response.status).toBe(204);
    }
    expect(await auditRows(t, 'team.agent_removed', team.id)).toHaveLength(1);
    const after = unwrap(await api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } } }));
    expect(after.agents).toEqual([]);
  });

  test('when the agent is of another workspace or evicted, then it cannot join', async () => {
    const owner = await t.seedMember('owner');
    const stranger = await t.seedMember('owner');
    const team = await createTeam(t, owner);
    const foreign = await t.seedAgent(stranger.workspace.id);
    const api = t.client({ token: owner.token });
    const foreignPut = await api.PUT('/api/v1/teams/{teamId}/agents/{agentId}', {
      params: { path: { teamId: team.id, agentId: foreign.id } },
    });
    expect(foreignPut.response.status).toBe(404);
    expect(foreignPut.error?.code).toBe('agent_not_found');
    const foreignDelete = await api.DELETE('/api/v1/teams/{teamId}/agents/{agentId}', {
      params: { path: { teamId: team.id, agentId: foreign.id } },
    });
    expect(foreignDelete.error?.code).toBe('agent_not_found');

    const evicted = await t.seedAgent(owner.workspace.id, { status: 'evicted', evictedAt: new Date() });
    const evictedPut = await api.PUT('/api/v1/teams/{teamId}/agents/{agentId}', {
      params: { path: { teamId: team.id, agentId: evicted.id } },
    });
    expect(evictedPut.response.status).toBe(409);
    expect(evictedPut.error?.code).toBe('agent_evicted');
  });

  test('when an automation key manages membership, then it works; a key without teams:write is refused', async () => {
    const owner = await t.seedMember('owner');
    const team = await createTeam(t, owner);
    const agent = await t.seedAgent(owner.workspace.id);
    const automation = await createKey(t, owner, { preset: 'automation' });
    const path = { path: { teamId: team.id, agentId: agent.id } };
    const put = await t.client({ apiKey: automation.key }).PUT('/api/v1/teams/{teamId}/agents/{agentId}', {
      params: path,
    });
    expect(put.response.status).toBe(200);
    const runtime = await createKey(t, owner, { preset: 'agent-runtime' });
    const refused = await t
      .client({ apiKey: runtime.key })
      .DELETE('/api/v1/teams/{teamId}/agents/{agentId}', {
        params: path,
      });
    expect(refused.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['teams:write'] });
  });

  test('when a workspace member is added to a team, then it is listed; a non-member is not found; removal is idempotent', async () => {
    const owner = await t.seedMember('owner');
    const colleague = await t.seedMember('viewer', owner.workspace);
    const outsider = await t.seedMember('owner');
    const team = await createTeam(t, owner);
    const api = t.client({ token: owner.token });
    const path = { path: { teamId: team.id, participantId: colleague.participantId } };
    const added = unwrap(
      await api.PUT('/api/v1/teams/{teamId}/participants/{participantId}', { params: path }),
    );
    expect(added).toMatchObject({ team_id: team.id, participant_id: colleague.participantId });
    expect(added).not.toHaveProperty('email');
    unwrap(await api.PUT('/api/v1/teams/{teamId}/participants/{participantId}', { params: path }));
    expect(await auditRows(t, 'team.participant_added', team.id)).toHaveLength(1);
    const detail = unwrap(await api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } } }));
    expect(detail.participants.map((p) => p.participant_id)).toEqual([colleague.participantId]);

    const foreign = await api.PUT('/api/v1/teams/{teamId}/participants/{participantId}', {
      params: { path: { teamId: team.id, participantId: outsider.participantId } },
    });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error?.code).toBe('participant_not_found');

    for (let i = 0; i < 2; i += 1) {
      const removed = await api.DELETE('/api/v1/teams/{teamId}/participants/{participantId}', {
        params: path,
      });
      expect(removed.response.status).toBe(204);
    }
    expect(await auditRows(t, 'team.participant_removed', team.id)).toHaveLength(1);
    const outsiderDelete = await api.DELETE('/api/v1/teams/{teamId}/participants/{participantId}', {
      params: { path: { teamId: team.id, participantId: outsider.participantId } },
    });
    expect(outsiderDelete.error?.code).toBe('participant_not_found');
  });

  test('when a viewer changes membership, then 403 role_forbidden', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const team = await createTeam(t, owner);
    const res = await t
      .client({ token: viewer.token })
      .PUT('/api/v1/teams/{teamId}/participants/{participantId}', {
        params: { path: { teamId: team.id, participantId: viewer.participantId } },
      });
    expect(res.response.status).toBe(403);
    expect(res.error?.code).toBe('role_forbidden');
  });
});

describe('project team assignments', () => {
  test('when a team is assigned, re-assigned, unassigned and assigned again, then the same assignment is kept and every change is audited', async () => {
    const member = await t.seedMember('member');
    const project = await createProject(t, member);
    const team = await createTeam(t, member);
    const api = t.client({ token: member.token });
    const projectPath = { path: { projectId: project.id } };

    const assigned = await api.POST('/api/v1/projects/{projectId}/teams', {
      params: projectPath,
      body: { team_id: team.id },
    });
    expect(assigned.response.status).toBe(201);
    expect(assigned.data?.data).toMatchObject({
      project_id: project.id,
      team: { id: team.id },
      unassigned_at: null,
      active: true,
    });
    const again = await api.POST('/api/v1/projects/{projectId}/teams', {
      params: projectPath,
      body: { team_id: team.id },
    });
    expect(again.response.status).toBe(200);
    expect(again.data?.data).toEqual(assigned.data?.data);

    const teamDetail = unwrap(
      await api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } } }),
    );
    expect(teamDetail.projects.map((p) => p.project.id)).toEqual([project.id]);

    const ended = unwrap(
      await api.DELETE('/api/v1/projects/{projectId}/teams/{teamId}', {
        params: { path: { projectId: project.id, teamId: team.id } },
      }),
    );
    expect(ended).toMatchObject({ active: false, unassigned_at: expect.any(String) });
    const endedAgain = unwrap(
      await api.DELETE('/api/v1/projects/{projectId}/teams/{teamId}', {
        params: { path: { projectId: project.id, teamId: team.id } },
      }),
    );
    expect(endedAgain).toEqual(ended);

    expect(unwrap(await api.GET('/api/v1/projects/{projectId}/teams', { params: projectPath }))).toEqual([]);
    const history = unwrap(
      await api.GET('/api/v1/projects/{projectId}/teams', {
        params: { ...projectPath, query: { include_unassigned: true } },
      }),
    );
    expect(history).toEqual([ended]);
    const teamAfter = unwrap(
      await api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } } }),
    );
    expect(teamAfter.projects).toEqual([]);

    const reactivated = await api.POST('/api/v1/projects/{projectId}/teams', {
      params: projectPath,
      body: { team_id: team.id },
    });
    expect(reactivated.response.status).toBe(201);
    expect(reactivated.data?.data).toMatchObject({ active: true, unassigned_at: null });
    expect(await t.database.prisma.projectTeam.count({ where: { projectId: project.id } })).toBe(1);

    const assignedEvents = await auditRows(t, 'project.team_assigned', project.id);
    expect(assignedEvents.map((e) => (e.data as { reactivated: boolean }).reactivated)).toEqual([
      false,
      true,
    ]);
    expect(await auditRows(t, 'project.team_unassigned', project.id)).toHaveLength(1);
  });

  test("when the team belongs to another workspace, then 400 team_not_found; another workspace's project is 404", async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    const projectA = await createProject(t, a);
    const teamB = await createTeam(t, b);
    const cross = await t.client({ token: a.token }).POST('/api/v1/projects/{projectId}/teams', {
      params: { path: { projectId: projectA.id } },
      body: { team_id: teamB.id },
    });
    expect(cross.response.status).toBe(400);
    expect(cross.error?.code).toBe('team_not_found');

    const keyB = await createKey(t, b, { preset: 'automation' });
    for (const caller of [{ token: b.token }, { apiKey: keyB.key }]) {
      const res = await t.client(caller).POST('/api/v1/projects/{projectId}/teams', {
        params: { path: { projectId: projectA.id } },
        body: { team_id: teamB.id },
      });
      expect(res.response.status).toBe(404);
      expect(res.error?.code).toBe('project_not_found');
      const list = await t
        .client(caller)
        .GET('/api/v1/projects/{projectId}/teams', { params: { path: { projectId: projectA.id } } });
      expect(list.response.status).toBe(404);
    }
  });

  test('when an automation key assigns, then it works; a read-only key lists but cannot assign; a viewer cannot assign', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const project = await createProject(t, owner);
    const team = await createTeam(t, owner);
    const automation = await createKey(t, owner, { preset: 'automation' });
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const projectPath = { path: { projectId: project.id } };
    const byKey = await t.client({ apiKey: automation.key }).POST('/api/v1/projects/{projectId}/teams', {
      params: projectPath,
      body: { team_id: team.id },
    });
    expect(byKey.response.status).toBe(201);
    const [event] = await auditRows(t, 'project.team_assigned', project.id);
    expect(event).toMatchObject({ actorKind: 'api_key', actorId: automation.id });

    const refused = await t
      .client({ apiKey: readOnly.key })
      .DELETE('/api/v1/projects/{projectId}/teams/{teamId}', {
        params: { path: { projectId: project.id, teamId: team.id } },
      });
    expect(refused.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['projects:write'] });
    const listed = unwrap(
      await t
        .client({ apiKey: readOnly.key })
        .GET('/api/v1/projects/{projectId}/teams', { params: projectPath }),
    );
    expect(listed.map((a) => a.team.id)).toEqual([team.id]);

    const byViewer = await t
      .client({ token: viewer.token })
      .DELETE('/api/v1/projects/{projectId}/teams/{teamId}', {
        params: { path: { projectId: project.id, teamId: team.id } },
      });
    expect(byViewer.error?.code).toBe('role_forbidden');
  });

  test('when a team that was never assigned is unassigned, then 404 project_team_not_found', async () => {
    const owner = await t.seedMember('owner');
    const project = await createProject(t, owner);
    const team = await createTeam(t, owner);
    const res = await t.client({ token: owner.token }).DELETE('/api/v1/projects/{projectId}/teams/{teamId}', {
      params: { path: { projectId: project.id, teamId: team.id } },
    });
    expect(res.response.status).toBe(404);
    expect(res.error?.code).toBe('project_team_not_found');
  });
});
