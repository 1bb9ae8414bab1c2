import { unwrap } from '@svc/contracts';
import { markLostAgents } from '../src/use-cases/agents/mark-lost-agents';
import { createKey, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

/** Hosts that die (decision 83): the presence sweep marks a silent host's agents lost, once, and life undoes it. */
let t: TestHub;
beforeAll(async () => {
  t = await startTestHub({ settings: { HUB_MANAGED_PROVIDERS: ['local'] } });
}, 30_000);
afterAll(() => t.close());

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);

describe('presence sweep', () => {
  test('when a host is silent past 30 s, then its running agents are lost, a silent agent too, each once however many sweeps race', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const dead = await t.seedHost(ws, { lastHeartbeatAt: ago(40) });
    const alive = await t.seedHost(ws);
    const onDead = await t.seedAgent(ws, { runtimeInstanceId: dead.id, lastHeartbeatAt: ago(5) });
    const stoppedOnDead = await t.seedAgent(ws, { runtimeInstanceId: dead.id, status: 'offline' });
    const silent = await t.seedAgent(ws, { runtimeInstanceId: alive.id, lastHeartbeatAt: ago(120) });
    const fine = await t.seedAgent(ws, { runtimeInstanceId: alive.id });

    // Two hub replicas sweeping at once, then again: every change is made (and audited) by one of them, once.
    const passes = [...(await Promise.all([markLostAgents(t.hub.deps), markLostAgents(t.hub.deps)]))];
    passes.push(await markLostAgents(t.hub.deps));
    const marked = passes.flatMap((p) => p.agents).filter((id) => [onDead.id, silent.id].includes(id));
    expect(marked.sort()).toEqual([onDead.id, silent.id].sort());
    expect(passes.flatMap((p) => p.hosts).filter((id) => id === dead.id)).toEqual([dead.id]);

    const agent = (id: string) => t.database.prisma.agent.findUniqueOrThrow({ where: { id } });
    expect(await agent(onDead.id)).toMatchObject({ status: 'lost', lostAt: expect.any(Date) });
    expect(await agent(silent.id)).toMatchObject({ status: 'lost' });
    expect((await agent(stoppedOnDead.id)).status).toBe('offline');
    expect((await agent(fine.id)).status).toBe('online');
    const audit = (action: string, targetId: string) =>
      t.database.prisma.auditEvent.findMany({ where: { action, targetId } });
    const [lostOnDead] = await audit('agent.lost', onDead.id);
    expect(lostOnDead?.data).toMatchObject({ cause: 'host_silent', previous_status: 'online' });
    expect(await audit('agent.lost', onDead.id)).toHaveLength(1);
    expect((await audit('agent.lost', silent.id))[0]?.data).toMatchObject({ cause: 'heartbeat_silent' });
    expect(await audit('runtime_host.lost', dead.id)).toHaveLength(1);

    // The roster and the agent's own record say lost, not stopped; the host takes no spawn.
    const read = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/agents/{agentId}', {
        params: { path: { agentId: onDead.id } },
      }),
    );
    expect(read.status).toBe('lost');
    const host = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/runtime-hosts/{hostId}', {
        params: { path: { hostId: dead.id } },
      }),
    );
    expect(host.lost_at).toEqual(expect.any(String));
    expect(host.readiness.spawn_ready).toBe(false);
  });

  test('when a lost host and its agent heartbeat again, then the host is no longer lost and the agent runs again', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const host = await t.seedHost(ws, { lastHeartbeatAt: ago(40) });
    const agent = await t.seedAgent(ws, { runtimeInstanceId: host.id, lastHeartbeatAt: ago(40) });
    await markLostAgents(t.hub.deps);
    expect((await t.database.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).status).toBe(
      'lost',
    );

    const hostKey = (await createKey(t, owner, { scopes: ['runtime-hosts:write'] })).key;
    const beat = await t.client({ apiKey: hostKey }).POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
      params: { path: { hostId: host.id } },
      body: { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' },
    });
    expect(unwrap(beat).lost_at).toBeNull();
    expect(
      await t.database.prisma.auditEvent.count({
        where: { action: 'runtime_host.returned', targetId: host.id },
      }),
    ).toBe(1);

    const back = unwrap(
      await t.client({ token: agent.token }).POST('/api/v1/agents/me/heartbeat', { body: {} }),
    );
    expect(back.status).toBe('online');
    const [resumed] = await t.database.prisma.auditEvent.findMany({
      where: { action: 'agent.resumed', targetId: agent.id },
    });
    expect(resumed?.data).toMatchObject({ previous_status: 'lost', status: 'online' });
    expect((await t.database.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).lostAt).toBeNull();
  });
});
