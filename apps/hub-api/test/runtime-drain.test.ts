import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

/** Drain and resume of a runtime host: readiness, refused handoffs, drained when its agents stopped, roles. */
let t: TestHub;
let owner: SeededMember;
let projectId: string;

beforeAll(async () => {
  t = await startTestHub();
  owner = await t.seedMember('owner');
  projectId = (await t.seedProject(owner.workspace.id)).id;
}, 30_000);
afterAll(() => t.close());

const drain = (hostId: string, credential: { token?: string; apiKey?: string }) =>
  t.client(credential).POST('/api/v1/runtime-hosts/{hostId}/drain', { params: { path: { hostId } } });
const resume = (hostId: string, credential: { token?: string; apiKey?: string }) =>
  t.client(credential).POST('/api/v1/runtime-hosts/{hostId}/resume', { params: { path: { hostId } } });
const heartbeat = (hostId: string, apiKey: string) =>
  t.client({ apiKey }).POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
    params: { path: { hostId } },
    body: { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' },
  });
const stageHandoff = (agentId: string, ref: string) =>
  t.internal().POST('/internal/v1/handoffs', {
    body: {
      workspace_id: owner.workspace.id,
      project_id: projectId,
      assignee_agent_id: agentId,
      title: 'Stage: build',
      reference: { kind: 'workflow_stage', id: ref },
    },
  });

describe('runtime host drain', () => {
  test('when an owner drains a host with a running agent, then it is draining, not spawn ready, its agents get no handoff, and it is drained once they stopped', async () => {
    const host = await t.seedHost(owner.workspace.id);
    const agent = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id });
    const other = await t.seedAgent(owner.workspace.id);
    const key = await createKey(t, owner, { preset: 'agent-runtime' });

    const res = await drain(host.id, { token: owner.token });
    expect(res.response.status).toBe(200);
    const drained = unwrap(res);
    expect(drained.drain).toMatchObject({ state: 'draining', requested_by: owner.email, drained_at: null });
    expect(drained.readiness.spawn_ready).toBe(false);
    expect(drained.readiness.causes.map((c) => c.code)).toContain('draining');

    // A repeat keeps the first request.
    const again = unwrap(await drain(host.id, { apiKey: key.key }));
    expect(again.drain?.requested_at).toBe(drained.drain?.requested_at);
    expect(again.drain?.requested_by).toBe(owner.email);

    const refused = await stageHandoff(agent.id, 'stage_drain_1');
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: 'runtime_host_draining' });
    expect((await stageHandoff(other.id, 'stage_drain_1')).response.status).toBe(201);

    const networks = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/workspaces/{workspace}/networks', {
        params: { path: { workspace: owner.workspace.slug } },
      }),
    );
    const shown = networks.hosts.find((h) => h.runtime_instance_id === host.id);
    expect(shown).toMatchObject({ spawn_ready: false, drain: { state: 'draining' }, running_agents: 1 });

    // Still an agent running: a heartbeat leaves it draining.
    expect(unwrap(await heartbeat(host.id, key.key)).drain?.state).toBe('draining');
    await t.database.prisma.agent.update({ where: { id: agent.id }, data: { status: 'offline' } });
    const after = unwrap(await heartbeat(host.id, key.key));
    expect(after.drain).toMatchObject({ state: 'drained' });
    expect(after.drain?.drained_at).not.toBeNull();
    const actions = (
      await t.database.prisma.auditEvent.findMany({ where: { targetId: host.id }, orderBy: { id: 'asc' } })
    ).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['runtime_host.drain_requested', 'runtime_host.drained']));
    expect(actions.filter((a) => a === 'runtime_host.drain_requested')).toHaveLength(1);

    // Resume: active and spawn ready again, handoffs accepted.
    const resumed = unwrap(await resume(host.id, { apiKey: key.key }));
    expect(resumed.drain).toEqual({
      state: 'active',
      requested_at: null,
      requested_by: null,
      drained_at: null,
    });
    expect(resumed.readiness.spawn_ready).toBe(true);
    await t.database.prisma.agent.update({ where: { id: agent.id }, data: { status: 'online' } });
    expect((await stageHandoff(agent.id, 'stage_drain_2')).response.status).toBe(201);
    expect(
      await t.database.prisma.auditEvent.count({
        where: { targetId: host.id, action: 'runtime_host.resumed' },
      }),
    ).toBe(1);
    // Resuming an active host changes nothing and records nothing.
    expect(unwrap(await resume(host.id, { token: owner.token })).drain?.state).toBe('active');
    expect(
      await t.database.prisma.auditEvent.count({
        where: { targetId: host.id, action: 'runtime_host.resumed' },
      }),
    ).toBe(1);
  });

  test('when a host without running agents is drained, then it is drained at once', async () => {
    const host = await t.seedHost(owner.workspace.id);
    const res = unwrap(await drain(host.id, { token: owner.token }));
    expect(res.drain?.state).toBe('drained');
  });

  test('when a member, a read-only key or another workspace asks, then 403 or 404', async () => {
    const host = await t.seedHost(owner.workspace.id);
    const member = await t.seedMember('member', owner.workspace);
    const memberRes = await drain(host.id, { token: member.token });
    expect(memberRes.response.status).toBe(403);
    expect(memberRes.error).toMatchObject({ code: 'role_forbidden' });
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    expect((await drain(host.id, { apiKey: readOnly.key })).response.status).toBe(403);
    const stranger = await t.seedMember('owner');
    const strangerRes = await resume(host.id, { token: stranger.token });
    expect(strangerRes.response.status).toBe(404);
    expect(strangerRes.error).toMatchObject({ code: 'runtime_host_not_found' });
    expect(
      unwrap(
        await t.client({ token: owner.token }).GET('/api/v1/runtime-hosts/{hostId}', {
          params: { path: { hostId: host.id } },
        }),
      ).drain?.state,
    ).toBe('active');
  });
});
