import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';
import { registerHost } from './support/runtime-helpers';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

const secondsAgo = (s: number) => new Date(Date.now() - s * 1000);

async function networks(member: SeededMember, credential: { token?: string; apiKey?: string } = {}) {
  return unwrap(
    await t
      .client(credential.apiKey ? { apiKey: credential.apiKey } : { token: credential.token ?? member.token })
      .GET('/api/v1/workspaces/{workspace}/networks', {
        params: { path: { workspace: member.workspace.slug } },
      }),
  );
}

async function runningOn(member: SeededMember, hostId: string) {
  const view = await networks(member);
  const host = view.hosts.find((h) => h.runtime_instance_id === hostId);
  if (!host) throw new Error(`host ${hostId} not in the Networks view`);
  return host.running_agents;
}

describe('networks view', () => {
  test('when a workspace has hosts, then each shows its server config, readiness and bundles, never its relay token', async () => {
    const owner = await t.seedMember('owner');
    const { host, relay_token: relayToken } = await registerHost(t, owner, {
      name: 'edge-a',
      workdir_root: '/srv/agents',
      console_public_base_url: 'https://console.edge-a.example.test',
    });
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    unwrap(
      await t.client({ apiKey: key.key }).POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId: host.id } },
        body: {
          relay_ready: true,
          console_router_ready: true,
          runtime_version: '3.1.0',
          bundle_id: 'wrt_edgeA',
        },
      }),
    );
    const view = await networks(owner);
    expect(view.workspace).toEqual({ id: owner.workspace.id, slug: owner.workspace.slug });
    expect(view.hosts).toEqual([
      {
        runtime_instance_id: host.id,
        name: 'edge-a',
        workdir_root: '/srv/agents',
        console_public_base_url: 'https://console.edge-a.example.test',
        relay_public_url: 'https://relay.example.test',
        spawn_ready: true,
        drain: { state: 'active', requested_at: null, requested_by: null, drained_at: null },
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
        last_heartbeat_at: expect.any(String),
        runtime_version: '3.1.0',
        bundles: ['wrt_edgeA'],
        console_activity: [],
      },
    ]);
    expect(JSON.stringify(view)).not.toContain(relayToken);
  });

  test('when agents start and stop on a host, then its running count follows at once', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    const otherHost = await t.seedHost(owner.workspace.id);
    expect(await runningOn(owner, host.id)).toBe(0);

    const a = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, status: 'online' });
    expect(a.runtimeInstanceId).toBe(host.id);
    expect(await runningOn(owner, host.id)).toBe(1);
    const b = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, status: 'idle' });
    const c = await t.seedAgent(owner.workspace.id, { runtimeInstanceId: host.id, status: 'busy' });
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: otherHost.id, status: 'online' });
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: null, status: 'online' });
    expect(await runningOn(owner, host.id)).toBe(3);
    expect(await runningOn(owner, otherHost.id)).toBe(1);

    const agents = t.database.prisma.agent;
    await agents.update({ where: { id: a.id }, data: { status: 'offline', stoppedAt: new Date() } });
    expect(await runningOn(owner, host.id)).toBe(2);
    await agents.update({ where: { id: b.id }, data: { status: 'evicted', evictedAt: new Date() } });
    expect(await runningOn(owner, host.id)).toBe(1);
    await agents.update({ where: { id: c.id }, data: { lastHeartbeatAt: secondsAgo(120) } });
    expect(await runningOn(owner, host.id)).toBe(0);
    await agents.update({ where: { id: c.id }, data: { lastHeartbeatAt: new Date() } });
    expect(await runningOn(owner, host.id)).toBe(1);
  });

  test('when an agent was never heartbeating, then it is not counted', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id);
    await t.seedAgent(owner.workspace.id, {
      runtimeInstanceId: host.id,
      status: 'online',
      lastHeartbeatAt: null,
    });
    expect(await runningOn(owner, host.id)).toBe(0);
  });

  test('when a heartbeat is stale or the relay is not ready, then the host is not spawn ready', async () => {
    const owner = await t.seedMember('owner');
    const stale = await t.seedHost(owner.workspace.id, { lastHeartbeatAt: secondsAgo(60) });
    const relayDown = await t.seedHost(owner.workspace.id, { relayReady: false });
    const never = await t.seedHost(owner.workspace.id, { lastHeartbeatAt: null });
    const ready = await t.seedHost(owner.workspace.id);
    const view = await networks(owner);
    const byId = new Map(view.hosts.map((h) => [h.runtime_instance_id, h]));
    expect(byId.get(stale.id)).toMatchObject({ spawn_ready: false, readiness: { heartbeat_fresh: false } });
    expect(byId.get(relayDown.id)).toMatchObject({
      spawn_ready: false,
      readiness: { heartbeat_fresh: true, relay_ready: false, reasons: ['the relay is not ready'] },
    });
    expect(byId.get(never.id)).toMatchObject({ spawn_ready: false, last_heartbeat_at: null });
    expect(byId.get(ready.id)?.spawn_ready).toBe(true);
  });

  test('when a viewer or a read-only key looks, then it works; the view lists only its own workspace', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const other = await t.seedMember('owner');
    const mine = await t.seedHost(owner.workspace.id);
    await t.seedHost(other.workspace.id);
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    expect((await networks(viewer)).hosts.map((h) => h.runtime_instance_id)).toEqual([mine.id]);
    expect((await networks(owner, { apiKey: readOnly.key })).hosts.map((h) => h.runtime_instance_id)).toEqual(
      [mine.id],
    );
    const automationWithoutAgents = await createKey(t, owner, { scopes: ['projects:read'] });
    const refused = await t
      .client({ apiKey: automationWithoutAgents.key })
      .GET('/api/v1/workspaces/{workspace}/networks', {
        params: { path: { workspace: owner.workspace.slug } },
      });
    expect(refused.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['agents:read'] });
  });

  test('when the workspace has no host, then the view is empty', async () => {
    const owner = await t.seedMember('owner');
    expect((await networks(owner)).hosts).toEqual([]);
  });
});
