import { SCOPE_PRESETS } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';
import { auditText, expectNoSecretsStored, registerHost } from './support/runtime-helpers';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

function pull(
  member: SeededMember,
  credential: { token?: string; apiKey?: string },
  runtimeInstanceId?: string,
) {
  return t.client(credential).GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-config', {
    params: {
      path: { workspace: member.workspace.slug },
      query: runtimeInstanceId === undefined ? {} : { runtime_instance_id: runtimeInstanceId },
    },
  });
}

function rotate(member: SeededMember, body: { runtime_instance_id?: string; overlap_seconds?: number }) {
  return t
    .client({ token: member.token })
    .POST('/api/v1/workspaces/{workspace}/infrastructure/runtime-config/rotate', {
      params: { path: { workspace: member.workspace.slug } },
      body,
    });
}

function heartbeat(
  apiKey: string,
  hostId: string,
  extra: { relay_ready?: boolean; console_router_ready?: boolean; console_router_detail?: string } = {},
) {
  return t.client({ apiKey }).POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
    params: { path: { hostId } },
    body: { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0', ...extra },
  });
}

describe('runtime config', () => {
  test('when an agent-runtime key pulls, then it gets the endpoints, the relay token and the key it presented, never cached', async () => {
    const owner = await t.seedMember('owner');
    const { host, relay_token: relayToken } = await registerHost(t, owner, {
      name: 'edge-9',
      workdir_root: '/srv/agents',
      console_public_base_url: 'https://console.edge-9.example.test',
      relay_public_url: 'https://relay.edge-9.example.test',
      console_router: { bind_host: '127.0.0.1', listen_port: 8791, route_prefix: '/c' },
      relay: { bind_host: '127.0.0.1', listen_port: 8788 },
    });
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    const res = await pull(owner, { apiKey: key.key }, host.id);
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('cache-control')).toBe('no-store');
    expect(unwrap(res)).toEqual({
      runtime_instance_id: host.id,
      workspace: { id: owner.workspace.id, slug: owner.workspace.slug },
      consoleRouter: {
        publicBaseUrl: 'https://console.edge-9.example.test',
        bindHost: '127.0.0.1',
        listenPort: 8791,
        routePrefix: '/c',
      },
      relay: { bindHost: '127.0.0.1', listenPort: 8788, publicUrl: 'https://relay.edge-9.example.test' },
      auth: { relay_token: relayToken, workspace_api_key: key.key },
      runtime_key: null,
      agent_workdir_root: '/srv/agents',
    });

    const [event] = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, action: 'runtime_config.pulled' },
    });
    expect(event).toMatchObject({ actorKind: 'api_key', actorId: key.id, targetId: host.id });
    expect(event?.data).toEqual({
      runtime_instance_id: host.id,
      api_key_minted: false,
      api_key_id: key.id,
    });
    expect(await t.database.prisma.apiKey.count({ where: { workspaceId: owner.workspace.id } })).toBe(1);
    await expectNoSecretsStored(t, owner.workspace.id, [relayToken, key.key]);
  });

  test('when a read-only or automation key pulls, then 403 scope_missing', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner);
    for (const preset of ['read-only', 'automation'] as const) {
      const key = await createKey(t, owner, { preset });
      const res = await pull(owner, { apiKey: key.key }, host.id);
      expect(res.response.status).toBe(403);
      expect(res.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['runtime-config:read'] });
    }
    expect(
      await t.database.prisma.auditEvent.count({
        where: { workspaceId: owner.workspace.id, action: 'runtime_config.pulled' },
      }),
    ).toBe(0);
  });

  test('when a participant reads the runtime config again and again, then nothing is minted or revoked', async () => {
    const owner = await t.seedMember('owner');
    const { host, relay_token: relayToken } = await registerHost(t, owner, { name: 'edge-read' });
    const hostKey = unwrap(await rotate(owner, { runtime_instance_id: host.id })).auth.workspace_api_key!;
    const keysBefore = await t.database.prisma.apiKey.findMany({
      orderBy: { id: 'asc' },
      where: { workspaceId: owner.workspace.id },
    });
    for (let i = 0; i < 3; i += 1) {
      const read = unwrap(await pull(owner, { token: owner.token }, host.id));
      expect(read.auth).toEqual({ relay_token: relayToken, workspace_api_key: '' });
      expect(read.runtime_key?.current).toMatchObject({ id: keysBefore[0]?.id, issued_by: owner.email });
      expect(read.runtime_key?.previous).toBeNull();
    }
    expect(
      await t.database.prisma.apiKey.findMany({
        orderBy: { id: 'asc' },
        where: { workspaceId: owner.workspace.id },
      }),
    ).toEqual(keysBefore);
    // The host's key still works after every read.
    expect(unwrap(await pull(owner, { apiKey: hostKey }, host.id)).auth.workspace_api_key).toBe(hostKey);
    const pulls = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, action: 'runtime_config.pulled' },
    });
    expect(pulls.map((e) => e.data)).toContainEqual({
      runtime_instance_id: host.id,
      api_key_minted: false,
      api_key_id: null,
    });
  });

  test('when a participant rotates, then the previous key stays valid for the overlap and the host is told it is superseded', async () => {
    const owner = await t.seedMember('owner');
    const admin = await t.seedMember('admin', owner.workspace);
    const { host, relay_token: relayToken } = await registerHost(t, owner, { name: 'edge-rot' });

    const first = unwrap(await rotate(owner, { runtime_instance_id: host.id }));
    const firstKey = first.auth.workspace_api_key!;
    expect(firstKey).toMatch(/^svc_[a-z0-9]{12}_/);
    expect(first.auth.relay_token).toBe(relayToken);
    const keys = t.database.prisma.apiKey;
    const minted = await keys.findFirstOrThrow({ where: { workspaceId: owner.workspace.id } });
    expect(minted).toMatchObject({
      name: 'runtime edge-rot',
      preset: 'agent-runtime',
      scopes: [...SCOPE_PRESETS['agent-runtime']],
      createdById: owner.participantId,
      revokedAt: null,
      expiresAt: null,
    });
    expect(unwrap(await heartbeat(firstKey, host.id)).readiness.runtime_key).toMatchObject({
      state: 'current',
      key_id: minted.id,
    });

    const before = Date.now();
    const second = unwrap(await rotate(admin, { runtime_instance_id: host.id }));
    const secondKey = second.auth.workspace_api_key!;
    expect(secondKey).not.toBe(firstKey);
    const kept = await keys.findUniqueOrThrow({ where: { id: minted.id } });
    expect(kept.revokedAt).toBeNull();
    const validUntil = kept.expiresAt!.getTime();
    expect(validUntil).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 5_000);
    expect(validUntil).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 5_000);
    expect(second.runtime_key?.previous).toEqual({
      id: minted.id,
      prefix: minted.prefix,
      valid_until: kept.expiresAt!.toISOString(),
    });

    // The host still on the first key keeps heartbeating (no failed beat) and hears that it is superseded.
    const answer = unwrap(await heartbeat(firstKey, host.id));
    expect(answer.readiness.runtime_key).toEqual({
      state: 'superseded',
      key_id: minted.id,
      rotated_at: expect.any(String),
      rotated_by: admin.email,
      valid_until: kept.expiresAt!.toISOString(),
    });
    const networks = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/workspaces/{workspace}/networks', {
        params: { path: { workspace: owner.workspace.slug } },
      }),
    );
    const shown = networks.hosts.find((h) => h.runtime_instance_id === host.id)!;
    expect(shown.readiness.causes).toContainEqual({
      code: 'runtime_key_superseded',
      message: `key superseded at ${answer.readiness.runtime_key.rotated_at} by ${admin.email}, valid until ${kept.expiresAt!.toISOString()}; pull the runtime config on the host (svc config pull-runtime)`,
      at: answer.readiness.runtime_key.rotated_at,
    });
    // The new key is the host's current key once the host uses it.
    expect(unwrap(await heartbeat(secondKey, host.id)).readiness.runtime_key.state).toBe('current');

    const rotatedEvents = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, action: 'runtime_key.rotated' },
      orderBy: { id: 'asc' },
    });
    const secondRow = await keys.findFirstOrThrow({ where: { prefix: second.runtime_key!.current.prefix } });
    expect(rotatedEvents.map((e) => e.data)).toEqual([
      expect.objectContaining({ api_key_id: minted.id, previous_api_key_id: null, overlap_seconds: 86400 }),
      expect.objectContaining({
        api_key_id: secondRow.id,
        previous_api_key_id: minted.id,
        previous_valid_until: kept.expiresAt!.toISOString(),
        revoked_api_key_ids: [],
      }),
    ]);

    // A third rotation revokes the key the second one kept: never more than two live runtime keys.
    const third = unwrap(await rotate(owner, { runtime_instance_id: host.id, overlap_seconds: 600 }));
    expect((await keys.findUniqueOrThrow({ where: { id: minted.id } })).revokedAt).not.toBeNull();
    expect((await pull(owner, { apiKey: firstKey }, host.id)).response.status).toBe(401);
    expect(unwrap(await pull(owner, { apiKey: secondKey }, host.id)).auth.workspace_api_key).toBe(secondKey);
    const live = await keys.findMany({ where: { workspaceId: owner.workspace.id, revokedAt: null } });
    expect(live.map((k) => k.id).sort()).toEqual([secondRow.id, third.runtime_key!.current.id].sort());
    await expectNoSecretsStored(t, owner.workspace.id, [relayToken, firstKey, secondKey]);
    expect(await auditText(t, owner.workspace.id)).not.toContain(third.auth.workspace_api_key!);
  });

  test('when a leaked key is rotated with overlap 0, then it is refused at once and the host shows its key revoked', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, { name: 'edge-leak' });
    const leaked = unwrap(await rotate(owner, { runtime_instance_id: host.id })).auth.workspace_api_key!;
    unwrap(await heartbeat(leaked, host.id));
    unwrap(await rotate(owner, { runtime_instance_id: host.id, overlap_seconds: 0 }));
    const refused = await heartbeat(leaked, host.id);
    expect(refused.response.status).toBe(401);
    const shown = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/runtime-hosts/{hostId}', {
        params: { path: { hostId: host.id } },
      }),
    );
    expect(shown.readiness.runtime_key.state).toBe('revoked');
    expect(shown.readiness.causes.map((c) => c.code)).toContain('runtime_key_revoked');
    const [event] = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, action: 'runtime_key.rotated' },
      orderBy: { id: 'desc' },
      take: 1,
    });
    expect(event?.data).toMatchObject({ overlap_seconds: 0, revoked_api_key_ids: [expect.any(String)] });
  });

  test('when the heartbeat of a host goes stale, then its relay and router are unknown, never ready, and the cause names the time', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, { name: 'edge-stale' });
    const key = unwrap(await rotate(owner, { runtime_instance_id: host.id })).auth.workspace_api_key!;
    const fresh = unwrap(
      await heartbeat(key, host.id, {
        relay_ready: true,
        console_router_ready: false,
        console_router_detail: 'route_table: hub answered HTTP 401',
      }),
    );
    expect(fresh.readiness).toMatchObject({
      relay_state: 'ready',
      console_router_state: 'not_ready',
      relay_ready: true,
      console_router_ready: false,
    });
    expect(fresh.readiness.causes).toEqual([
      {
        code: 'console_router_not_ready',
        message: 'the console router is not ready: route_table: hub answered HTTP 401',
      },
    ]);
    const lastBeat = new Date(Date.now() - 120_000);
    await t.database.prisma.runtimeHost.update({
      where: { id: host.id },
      data: { lastHeartbeatAt: lastBeat },
    });
    const stale = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/runtime-hosts/{hostId}', {
        params: { path: { hostId: host.id } },
      }),
    );
    expect(stale.readiness).toMatchObject({
      heartbeat_fresh: false,
      relay_state: 'unknown',
      console_router_state: 'unknown',
      relay_ready: false,
      console_router_ready: false,
      spawn_ready: false,
    });
    expect(stale.readiness.causes).toEqual([
      {
        code: 'heartbeat_stale',
        message: `no heartbeat since ${lastBeat.toISOString()} (more than 45 s)`,
        at: lastBeat.toISOString(),
      },
    ]);
  });

  test('when participants rotate the same host concurrently, then exactly two runtime keys stay live', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, { name: 'edge-race' });
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => rotate(owner, { runtime_instance_id: host.id })),
    );
    expect(results.map((r) => r.response.status)).toEqual([200, 200, 200, 200]);
    const live = await t.database.prisma.apiKey.findMany({
      where: { workspaceId: owner.workspace.id, revokedAt: null },
    });
    expect(live).toHaveLength(2);
    const row = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } });
    expect(live.map((k) => k.id).sort()).toEqual([row.runtimeApiKeyId, row.previousRuntimeApiKeyId].sort());
    expect(await t.database.prisma.apiKey.count({ where: { workspaceId: owner.workspace.id } })).toBe(4);
  });

  test('when two hosts are rotated by a participant, then each keeps its own runtime key', async () => {
    const owner = await t.seedMember('owner');
    const a = await registerHost(t, owner, { name: 'host-a' });
    const b = await registerHost(t, owner, { name: 'host-b' });
    unwrap(await rotate(owner, { runtime_instance_id: a.host.id }));
    unwrap(await rotate(owner, { runtime_instance_id: b.host.id }));
    const live = await t.database.prisma.apiKey.findMany({
      where: { workspaceId: owner.workspace.id, revokedAt: null },
      orderBy: { name: 'asc' },
    });
    expect(live.map((k) => k.name)).toEqual(['runtime host-a', 'runtime host-b']);
  });

  test('when a member or a viewer pulls or rotates, then 403 role_forbidden and no key is minted', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner);
    for (const role of ['member', 'viewer'] as const) {
      const person = await t.seedMember(role, owner.workspace);
      const res = await pull(person, { token: person.token }, host.id);
      expect(res.response.status).toBe(403);
      expect(res.error?.code).toBe('role_forbidden');
      const rotated = await rotate(person, { runtime_instance_id: host.id });
      expect(rotated.response.status).toBe(403);
      expect(rotated.error?.code).toBe('role_forbidden');
    }
    expect(await t.database.prisma.apiKey.count({ where: { workspaceId: owner.workspace.id } })).toBe(0);
  });

  test('when runtime_instance_id is left out, then the only host is used; none is 404 and several is 400', async () => {
    const owner = await t.seedMember('owner');
    const key = (await createKey(t, owner, { preset: 'agent-runtime' })).key;
    const none = await pull(owner, { apiKey: key });
    expect(none.response.status).toBe(404);
    expect(none.error?.code).toBe('no_runtime_host');
    expect(none.error?.detail).toContain('Register one');

    const { host } = await registerHost(t, owner);
    expect(unwrap(await pull(owner, { apiKey: key })).runtime_instance_id).toBe(host.id);

    const second = await registerHost(t, owner);
    const several = await pull(owner, { apiKey: key });
    expect(several.response.status).toBe(400);
    expect(several.error).toMatchObject({
      code: 'runtime_instance_id_required',
      runtime_instance_ids: [host.id, second.host.id],
    });
    expect(unwrap(await pull(owner, { apiKey: key }, second.host.id)).runtime_instance_id).toBe(
      second.host.id,
    );
  });

  test('when runtime_instance_id is a bundle id, malformed or of another workspace, then 400 without secrets', async () => {
    const owner = await t.seedMember('owner');
    const other = await t.seedMember('owner');
    const foreign = await registerHost(t, other);
    await registerHost(t, owner);
    const key = (await createKey(t, owner, { preset: 'agent-runtime' })).key;

    const bundle = await pull(owner, { apiKey: key }, 'wrt_01hx3d9zq4');
    expect(bundle.response.status).toBe(400);
    expect(bundle.error?.code).toBe('runtime_bundle_id_not_allowed');
    const malformed = await pull(owner, { apiKey: key }, 'edge-1');
    expect(malformed.error?.code).toBe('runtime_instance_id_invalid');
    const hidden = await pull(owner, { apiKey: key }, foreign.host.id);
    expect(hidden.response.status).toBe(400);
    expect(hidden.error?.code).toBe('runtime_host_not_found');
    expect(JSON.stringify(hidden.error)).not.toContain(foreign.relay_token);
  });

  test('when the relay token was rotated, then the next pull hands out the new one', async () => {
    const owner = await t.seedMember('owner');
    const { host, relay_token: oldToken } = await registerHost(t, owner);
    const rotated = unwrap(
      await t
        .client({ token: owner.token })
        .POST('/api/v1/runtime-hosts/{hostId}/relay-token/rotate', { params: { path: { hostId: host.id } } }),
    );
    const key = (await createKey(t, owner, { preset: 'agent-runtime' })).key;
    const config = unwrap(await pull(owner, { apiKey: key }, host.id));
    expect(config.auth.relay_token).toBe(rotated.relay_token);
    expect(config.auth.relay_token).not.toBe(oldToken);
  });
});
