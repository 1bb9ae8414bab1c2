import { unwrap } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import { auditRows, createTeam, registerAgent } from './support/agents-fixtures';
import type { AgentRecord } from './support/agents-fixtures';
import { createKey, startTestHub } from './support/harness';
import type { SeededHost, SeededMember, TestHub } from './support/harness';

const RUNTIME_CREDENTIAL_ACTION = 'credential.runtime.issued';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub({ settings: { HUB_MANAGED_PROVIDERS: ['local', 'anthropic'] } });
}, 30_000);
afterAll(() => t.close());

interface Fixture {
  owner: SeededMember;
  host: SeededHost;
  agent: AgentRecord;
}

async function offlineAgent(
  options: { model?: string; hostOverrides?: Record<string, unknown> } = {},
): Promise<Fixture> {
  const owner = await t.seedMember('owner');
  const host = await t.seedHost(owner.workspace.id, options.hostOverrides);
  const agent = await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
    runtime_instance_id: host.id,
    model: options.model ?? 'local/echo',
    serve_port: 4341,
  });
  return { owner, host, agent };
}

function start(
  caller: { token?: string; apiKey?: string },
  agentId: string,
  body: Record<string, unknown> = {},
) {
  return t.client(caller).POST('/api/v1/agents/{agentId}/start', {
    params: { path: { agentId } },
    body: { launch_path: 'direct', ...body } as never,
  });
}

function stop(caller: { token?: string; apiKey?: string }, agentId: string) {
  return t.client(caller).POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId } } });
}

function evict(token: string, agentId: string) {
  return t.client({ token }).POST('/api/v1/agents/{agentId}/evict', { params: { path: { agentId } } });
}

describe('starting an agent', () => {
  test('when an owner starts an agent directly, then it is online on its rti_ host with an AGENT_TOKEN and exactly one runtime credential', async () => {
    const { owner, host, agent } = await offlineAgent();
    const res = await start({ token: owner.token }, agent.id);
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('cache-control')).toBe('no-store');
    const started = res.data!.data;
    expect(started.agent).toMatchObject({
      id: agent.id,
      status: 'online',
      runtime_instance_id: host.id,
      model: 'local/echo',
      stopped_at: null,
    });
    expect(started.agent.runtime_instance_id).toMatch(/^rti_/);
    expect(started.agent.started_at).toEqual(started.agent.last_heartbeat_at);
    expect(started.agent_token).toMatch(/^eyJ/);
    expect(Date.parse(started.agent_token_expires_at)).toBeGreaterThan(Date.now());
    expect(started.runtime_credential).toMatchObject({
      provider: 'local',
      model: 'local/echo',
      authorization_source: 'hub_managed',
    });
    expect(Date.parse(started.runtime_credential.expires_at) - Date.now()).toBeLessThanOrEqual(
      15 * 60 * 1000,
    );

    expect(await auditRows(t, RUNTIME_CREDENTIAL_ACTION, agent.id)).toHaveLength(1);
    const [startedEvent] = await auditRows(t, 'agent.started', agent.id);
    expect(startedEvent).toMatchObject({
      actorKind: 'participant',
      actorId: owner.participantId,
      data: expect.objectContaining({
        launch_path: 'direct',
        runtime_instance_id: host.id,
        previous_status: 'offline',
      }),
    });

    const self = unwrap(await t.client({ token: started.agent_token }).GET('/api/v1/agents/me'));
    expect(self).toMatchObject({ id: agent.id, status: 'online' });

    const stored = JSON.stringify(
      await t.database.prisma.auditEvent.findMany({ where: { targetId: agent.id } }),
    );
    const logged = t.logs.join('\n');
    for (const secret of [started.agent_token, started.runtime_credential.token]) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
  });

  test('when the agent-runtime key starts and stops an agent, then both work; a member participant is refused', async () => {
    const { owner, agent } = await offlineAgent();
    const member = await t.seedMember('member', owner.workspace);
    const byMember = await start({ token: member.token }, agent.id);
    expect(byMember.error?.code).toBe('role_forbidden');
    const runtime = await createKey(t, owner, { preset: 'agent-runtime' });
    const started = await start({ apiKey: runtime.key }, agent.id, { launch_path: 'relay' });
    expect(started.response.status).toBe(200);
    const [event] = await auditRows(t, 'agent.started', agent.id);
    expect(event).toMatchObject({
      actorKind: 'api_key',
      data: expect.objectContaining({ launch_path: 'relay' }),
    });
    const stopped = await stop({ apiKey: runtime.key }, agent.id);
    expect(stopped.data?.data.status).toBe('offline');
    const automation = await createKey(t, owner, { preset: 'automation' });
    const noSpawn = await start({ apiKey: automation.key }, agent.id);
    expect(noSpawn.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['agents:spawn'] });
  });

  test('when the agent is stopped, then it keeps its id and a restart works with a new runtime credential', async () => {
    const { owner, agent } = await offlineAgent();
    const first = unwrap(await start({ token: owner.token }, agent.id));
    const stopped = unwrap(await stop({ token: owner.token }, agent.id));
    expect(stopped).toMatchObject({
      id: agent.id,
      status: 'offline',
      runtime_instance_id: agent.runtime_instance_id,
    });
    expect(stopped.stopped_at).not.toBeNull();
    const stoppedAgain = unwrap(await stop({ token: owner.token }, agent.id));
    expect(stoppedAgain).toEqual(stopped);
    expect(await auditRows(t, 'agent.stopped', agent.id)).toHaveLength(1);

    const second = unwrap(await start({ token: owner.token }, agent.id));
    expect(second.agent).toMatchObject({ id: agent.id, status: 'online', stopped_at: null });
    expect(second.agent_token).not.toBe(first.agent_token);
    expect(await auditRows(t, RUNTIME_CREDENTIAL_ACTION, agent.id)).toHaveLength(2);
    expect(await auditRows(t, 'agent.started', agent.id)).toHaveLength(2);
  });

  test('when the agent is already running, then a second start is 409 agent_already_running and issues nothing', async () => {
    const { owner, agent } = await offlineAgent();
    unwrap(await start({ token: owner.token }, agent.id));
    const again = await start({ token: owner.token }, agent.id);
    expect(again.response.status).toBe(409);
    expect(again.error?.code).toBe('agent_already_running');
    expect(await auditRows(t, RUNTIME_CREDENTIAL_ACTION, agent.id)).toHaveLength(1);
  });

  test('when concurrent starts race, then exactly one succeeds and one credential is issued', async () => {
    const { owner, agent } = await offlineAgent();
    const results = await Promise.all([1, 2, 3].map(() => start({ token: owner.token }, agent.id)));
    expect(results.map((r) => r.response.status).sort()).toEqual([200, 409, 409]);
    expect(await auditRows(t, RUNTIME_CREDENTIAL_ACTION, agent.id)).toHaveLength(1);
  });

  test('when the host heartbeat is stale, then 409 runtime_host_not_ready with the reasons and the agent stays offline', async () => {
    const { owner, agent } = await offlineAgent({
      hostOverrides: { lastHeartbeatAt: new Date(Date.now() - 10 * 60 * 1000) },
    });
    const res = await start({ token: owner.token }, agent.id);
    expect(res.response.status).toBe(409);
    expect(res.error?.code).toBe('runtime_host_not_ready');
    expect((res.error as { reasons?: string[] }).reasons).toEqual(
      expect.arrayContaining([expect.stringMatching(/no heartbeat/)]),
    );
    const row = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } });
    expect(row.status).toBe('offline');
    expect(await auditRows(t, RUNTIME_CREDENTIAL_ACTION, agent.id)).toHaveLength(0);
  });

  test('when the relay is not ready, then a relay start is refused but a direct start works', async () => {
    const { owner, agent } = await offlineAgent({ hostOverrides: { relayReady: false } });
    const relay = await start({ token: owner.token }, agent.id, { launch_path: 'relay' });
    expect(relay.error?.code).toBe('runtime_host_not_ready');
    expect((relay.error as { reasons?: string[] }).reasons).toContain('the relay is not ready');
    const direct = await start({ token: owner.token }, agent.id, { launch_path: 'direct' });
    expect(direct.response.status).toBe(200);
  });

  test('when the agent has no model, or an unsupported one is requested, then 400 and nothing is issued', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const agent = await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
    });
    const noModel = await start({ token: owner.token }, agent.id);
    expect(noModel.error?.code).toBe('model_required');
    const unsupported = await start({ token: owner.token }, agent.id, { model: 'local/echo-v2' });
    expect(unsupported.error?.code).toBe('provider_model_unsupported');
    expect((unsupported.error as { close_matches?: string[] }).close_matches).toContain('local/echo');
    expect(await auditRows(t, RUNTIME_CREDENTIAL_ACTION, agent.id)).toHaveLength(0);

    const withModel = unwrap(
      await start({ token: owner.token }, agent.id, { model: 'anthropic/claude-haiku-4-5' }),
    );
    expect(withModel.agent.model).toBe('anthropic/claude-haiku-4-5');
    expect(withModel.runtime_credential).toMatchObject({
      provider: 'anthropic',
      model: 'anthropic/claude-haiku-4-5',
    });
  });

  test('when no provider authorization is available, then the start is refused and the agent stays offline', async () => {
    const { owner, agent } = await offlineAgent({ model: 'openai/gpt-5' });
    const res = await start({ token: owner.token }, agent.id);
    expect(res.response.status).toBe(409);
    expect(res.error?.code).toBe('provider_credential_unavailable');
    const row = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } });
    expect(row).toMatchObject({ status: 'offline', startedAt: null });
    expect(await auditRows(t, 'agent.started', agent.id)).toHaveLength(0);
  });

  test('when the start moves the agent to a serve port another agent holds, then 409 serve_port_taken', async () => {
    const { owner, host, agent } = await offlineAgent();
    await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      serve_port: 4500,
    });
    const res = await start({ token: owner.token }, agent.id, { serve_port: 4500 });
    expect(res.error?.code).toBe('serve_port_taken');
    const moved = unwrap(await start({ token: owner.token }, agent.id, { serve_port: 4501 }));
    expect(moved.agent.serve_port).toBe(4501);
  });

  test('when the host workdir_root changed so the agent workdir is outside it, then the start is refused', async () => {
    const { owner, host, agent } = await offlineAgent();
    await t.database.prisma.runtimeHost.update({
      where: { id: host.id },
      data: { workdirRoot: '/data/agents' },
    });
    const res = await start({ token: owner.token }, agent.id);
    expect(res.response.status).toBe(409);
    expect(res.error?.code).toBe('workdir_outside_root');
  });

  test("when someone starts another workspace's agent, then it is not found", async () => {
    const { agent } = await offlineAgent();
    const stranger = await t.seedMember('owner');
    const key = await createKey(t, stranger, { preset: 'agent-runtime' });
    for (const caller of [{ token: stranger.token }, { apiKey: key.key }]) {
      const res = await start(caller, agent.id);
      expect(res.response.status).toBe(404);
      expect(res.error?.code).toBe('agent_not_found');
    }
  });
});

describe('evicting and deleting an agent', () => {
  test('when an owner evicts an agent, then the row is kept, its token gets 401 and start, stop and heartbeat are refused', async () => {
    const { owner, agent } = await offlineAgent();
    const started = unwrap(await start({ token: owner.token }, agent.id));
    const evicted = unwrap(await evict(owner.token, agent.id));
    expect(evicted).toMatchObject({
      id: agent.id,
      status: 'evicted',
      runtime_instance_id: agent.runtime_instance_id,
    });
    expect(evicted.evicted_at).not.toBeNull();
    expect(unwrap(await evict(owner.token, agent.id))).toEqual(evicted);
    expect(await auditRows(t, 'agent.evicted', agent.id)).toHaveLength(1);
    expect(await t.database.prisma.agent.count({ where: { id: agent.id } })).toBe(1);

    const asAgent = t.client({ token: started.agent_token });
    expect((await asAgent.GET('/api/v1/agents/me')).response.status).toBe(401);
    expect((await asAgent.POST('/api/v1/agents/me/heartbeat', { body: {} })).response.status).toBe(401);
    expect((await asAgent.POST('/api/v1/agents/me/token')).response.status).toBe(401);

    const restart = await start({ token: owner.token }, agent.id);
    expect(restart.response.status).toBe(409);
    expect(restart.error?.code).toBe('agent_evicted');
    expect((await stop({ token: owner.token }, agent.id)).error?.code).toBe('agent_evicted');
    expect(await auditRows(t, RUNTIME_CREDENTIAL_ACTION, agent.id)).toHaveLength(1);
  });

  test('when an admin evicts, then it works; a member, a key or another workspace cannot', async () => {
    const { owner, agent } = await offlineAgent();
    const admin = await t.seedMember('admin', owner.workspace);
    const member = await t.seedMember('member', owner.workspace);
    const stranger = await t.seedMember('owner');
    expect((await evict(member.token, agent.id)).error?.code).toBe('role_forbidden');
    expect((await evict(stranger.token, agent.id)).response.status).toBe(404);
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    const byKey = await fetch(`${t.url}/api/v1/agents/${agent.id}/evict`, {
      method: 'POST',
      headers: { 'x-api-key': key.key },
    });
    expect(byKey.status).toBe(403);
    expect((await evict(admin.token, agent.id)).response.status).toBe(200);
  });

  test('when an evicted agent is referenced by a handoff, then DELETE is 409 agent_referenced and the row stays', async () => {
    const { owner, agent } = await offlineAgent();
    await t.database.prisma.handoff.create({
      data: {
        id: newId('hnd'),
        workspaceId: owner.workspace.id,
        title: 'Review the change',
        assigneeAgentId: agent.id,
        createdByKind: 'participant',
        createdById: owner.participantId,
      },
    });
    unwrap(await evict(owner.token, agent.id));
    const res = await t
      .client({ token: owner.token })
      .DELETE('/api/v1/agents/{agentId}', { params: { path: { agentId: agent.id } } });
    expect(res.response.status).toBe(409);
    expect(res.error?.code).toBe('agent_referenced');
    expect(res.error?.detail).toContain(
      'the row is kept while runs, handoffs, claims or evidence reference it',
    );
    expect((res.error as { references?: unknown }).references).toEqual({
      handoffs: 1,
      evidence: 0,
      messages: 0,
    });
    expect(await t.database.prisma.agent.count({ where: { id: agent.id } })).toBe(1);
  });

  test('when an evicted agent is referenced by evidence or a message, then DELETE is 409 as well', async () => {
    const { owner, agent } = await offlineAgent();
    const handoff = await t.database.prisma.handoff.create({
      data: { id: newId('hnd'), workspaceId: owner.workspace.id, title: 'x', createdByKind: 'participant' },
    });
    await t.database.prisma.handoffEvidence.create({
      data: {
        id: newId('evd'),
        handoffId: handoff.id,
        agentId: agent.id,
        kind: 'note',
        content: { text: 'done' },
      },
    });
    const other = await offlineAgent();
    await t.database.prisma.message.create({
      data: {
        id: newId('msg'),
        workspaceId: other.owner.workspace.id,
        toAgentId: newId('agt'),
        fromKind: 'agent',
        fromId: other.agent.id,
        kind: 'ask',
        body: 'hello',
      },
    });
    for (const { owner: who, agent: which } of [
      { owner, agent },
      { owner: other.owner, agent: other.agent },
    ]) {
      unwrap(await evict(who.token, which.id));
      const res = await t
        .client({ token: who.token })
        .DELETE('/api/v1/agents/{agentId}', { params: { path: { agentId: which.id } } });
      expect(res.error?.code).toBe('agent_referenced');
    }
  });

  test('when an unreferenced agent is deleted, then it must be evicted first, and afterwards the row and its memberships are gone', async () => {
    const { owner, agent } = await offlineAgent();
    const team = await createTeam(t, owner);
    unwrap(
      await t.client({ token: owner.token }).PUT('/api/v1/teams/{teamId}/agents/{agentId}', {
        params: { path: { teamId: team.id, agentId: agent.id } },
      }),
    );
    const api = t.client({ token: owner.token });
    const path = { path: { agentId: agent.id } };
    const notEvicted = await api.DELETE('/api/v1/agents/{agentId}', { params: path });
    expect(notEvicted.response.status).toBe(409);
    expect(notEvicted.error?.code).toBe('agent_not_evicted');
    unwrap(await evict(owner.token, agent.id));
    const member = await t.seedMember('member', owner.workspace);
    const byMember = await t
      .client({ token: member.token })
      .DELETE('/api/v1/agents/{agentId}', { params: path });
    expect(byMember.error?.code).toBe('role_forbidden');
    const deleted = await api.DELETE('/api/v1/agents/{agentId}', { params: path });
    expect(deleted.response.status).toBe(204);
    expect(await t.database.prisma.agent.count({ where: { id: agent.id } })).toBe(0);
    expect(await t.database.prisma.teamAgent.count({ where: { agentId: agent.id } })).toBe(0);
    expect(await auditRows(t, 'agent.deleted', agent.id)).toHaveLength(1);
    expect((await api.GET('/api/v1/agents/{agentId}', { params: path })).response.status).toBe(404);
  });
});
