import { unwrap } from '@svc/contracts';
import { poolCounts } from '@svc/db-kit';
import { auditRows, createProject, createTeam, registerAgent } from './support/agents-fixtures';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub({ settings: { HUB_MANAGED_PROVIDERS: ['local'] } });
}, 30_000);
afterAll(() => t.close());

/** A registered agent started through the API, with its AGENT_TOKEN. */
async function startedAgent(owner?: SeededMember, body: Record<string, unknown> = {}) {
  const who = owner ?? (await t.seedMember('owner'));
  const host = await t.seedHost(who.workspace.id, { workdirRoot: '/srv/runtime/agents' });
  const agent = await registerAgent(t, { token: who.token }, who.workspace.slug, {
    runtime_instance_id: host.id,
    model: 'local/echo',
    workdir: '/srv/runtime/agents/self',
    ...body,
  });
  const started = unwrap(
    await t.client({ token: who.token }).POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId: agent.id } },
      body: { launch_path: 'direct' },
    }),
  );
  return { owner: who, host, agent: started.agent, token: started.agent_token };
}

describe('agent self routes', () => {
  test('when an agent reads itself, then it gets its own record', async () => {
    const { agent, token } = await startedAgent();
    expect(unwrap(await t.client({ token }).GET('/api/v1/agents/me'))).toEqual(agent);
  });

  test('when an agent onboards, then it learns its workspace, host, workdir root, teams, projects and the hub URL', async () => {
    const owner = await t.seedMember('owner');
    const own = await createProject(t, owner);
    const viaTeam = await createProject(t, owner);
    const ended = await createProject(t, owner);
    const unrelated = await createProject(t, owner);
    const team = await createTeam(t, owner);
    const api = t.client({ token: owner.token });
    for (const project of [viaTeam, ended]) {
      unwrap(
        await api.POST('/api/v1/projects/{projectId}/teams', {
          params: { path: { projectId: project.id } },
          body: { team_id: team.id },
        }),
      );
    }
    unwrap(
      await api.DELETE('/api/v1/projects/{projectId}/teams/{teamId}', {
        params: { path: { projectId: ended.id, teamId: team.id } },
      }),
    );
    const { host, agent, token } = await startedAgent(owner, {
      workdir: undefined,
      project_code: own.code,
      team_id: team.id,
      worker: true,
    });
    const onboard = unwrap(await t.client({ token }).GET('/api/v1/agents/me/onboard'));
    expect(onboard).toMatchObject({
      workspace: { id: owner.workspace.id, slug: owner.workspace.slug },
      agent: { id: agent.id },
      host: {
        id: host.id,
        workdir_root: '/srv/runtime/agents',
        console_public_base_url: 'https://console.example.test',
      },
      agent_workdir_root: '/srv/runtime/agents',
      teams: [{ id: team.id }],
      hub_url: 'http://hub.test',
    });
    expect(onboard.projects.map((p) => p.id).sort()).toEqual([own.id, viaTeam.id].sort());
    expect(onboard.projects.map((p) => p.id)).not.toContain(unrelated.id);
    expect(JSON.stringify(onboard)).not.toMatch(/relay_token|rly_/);
  });

  test('when an agent heartbeats, then it moves between online, idle and busy and its heartbeat time advances', async () => {
    const { agent, token } = await startedAgent();
    const api = t.client({ token });
    const busy = unwrap(await api.POST('/api/v1/agents/me/heartbeat', { body: { status: 'busy' } }));
    expect(busy.status).toBe('busy');
    expect(Date.parse(busy.last_heartbeat_at!)).toBeGreaterThanOrEqual(Date.parse(agent.last_heartbeat_at!));
    const kept = unwrap(await api.POST('/api/v1/agents/me/heartbeat', {}));
    expect(kept.status).toBe('busy');
    const idle = unwrap(await api.POST('/api/v1/agents/me/heartbeat', { body: { status: 'idle' } }));
    expect(idle.status).toBe('idle');
    const bad = await api.POST('/api/v1/agents/me/heartbeat', { body: { status: 'evicted' as never } });
    expect(bad.response.status).toBe(400);
  });

  test("when a running agent heartbeats, then the hub reads its credential's standing and answers in one transaction of four statements", async () => {
    const { token } = await startedAgent();
    const api = t.client({ token });
    unwrap(await api.POST('/api/v1/agents/me/heartbeat', { body: { status: 'idle' } }));
    const before = { ...poolCounts(t.database.pool)! };
    const busy = unwrap(await api.POST('/api/v1/agents/me/heartbeat', { body: { status: 'busy' } }));
    const after = poolCounts(t.database.pool)!;
    expect(busy.status).toBe('busy');
    // The standing read; then BEGIN, the row locked and read in one statement, the update, COMMIT.
    expect({
      statements: after.statements - before.statements,
      transactions: after.transactions - before.transactions,
    }).toEqual({ statements: 5, transactions: 2 });
  });

  test('when an agent stops itself, then it is offline with its id kept, and a later heartbeat brings it online again', async () => {
    const { agent, token } = await startedAgent();
    const api = t.client({ token });
    const stopped = unwrap(await api.POST('/api/v1/agents/me/stop'));
    expect(stopped).toMatchObject({ id: agent.id, status: 'offline' });
    const [event] = await auditRows(t, 'agent.stopped', agent.id);
    expect(event).toMatchObject({ actorKind: 'agent', actorId: agent.id });
    expect(unwrap(await api.POST('/api/v1/agents/me/stop'))).toEqual(stopped);

    const resumed = unwrap(await api.POST('/api/v1/agents/me/heartbeat', { body: {} }));
    expect(resumed.status).toBe('online');
    expect(await auditRows(t, 'agent.resumed', agent.id)).toHaveLength(1);
  });

  test('when an agent refreshes its token, then the new token works and the refresh is audited without the token', async () => {
    const { agent, token } = await startedAgent();
    const res = await t.client({ token }).POST('/api/v1/agents/me/token');
    expect(res.response.headers.get('cache-control')).toBe('no-store');
    const refreshed = res.data!.data;
    expect(refreshed.agent_token).not.toBe(token);
    expect(unwrap(await t.client({ token: refreshed.agent_token }).GET('/api/v1/agents/me')).id).toBe(
      agent.id,
    );
    const [event] = await auditRows(t, 'credential.agent_token.refreshed', agent.id);
    expect(event).toMatchObject({ actorKind: 'agent', actorId: agent.id });
    expect(JSON.stringify(event)).not.toContain(refreshed.agent_token);
    expect(t.logs.join('\n')).not.toContain(refreshed.agent_token);
  });

  test('when an agent token is used on operator routes, then 403 actor_not_allowed', async () => {
    const { owner, agent, token } = await startedAgent();
    const api = t.client({ token });
    const read = await api.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: agent.id } } });
    expect(read.error?.code).toBe('actor_not_allowed');
    const list = await api.GET('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: owner.workspace.slug } },
    });
    expect(list.error?.code).toBe('actor_not_allowed');
    const restart = await api.POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId: agent.id } },
      body: { launch_path: 'direct' },
    });
    expect(restart.error?.code).toBe('actor_not_allowed');
    const team = await api.POST('/api/v1/workspaces/{workspace}/teams', {
      params: { path: { workspace: owner.workspace.slug } },
      body: { name: 'agents-cannot' },
    });
    expect(team.error?.code).toBe('actor_not_allowed');
  });

  test('when a participant or an API key calls an agent self route, then 403', async () => {
    const owner = await t.seedMember('owner');
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    for (const caller of [{ token: owner.token }, { apiKey: key.key }]) {
      const res = await t.client(caller).GET('/api/v1/agents/me/onboard');
      expect(res.response.status).toBe(403);
      expect(res.error?.code).toBe('actor_not_allowed');
    }
  });
});
