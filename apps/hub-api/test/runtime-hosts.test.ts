import { hashOpaqueToken, verifyOpaqueToken } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';
import { expectNoSecretsStored, hostBody, registerHost } from './support/runtime-helpers';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

const STALE = () => new Date(Date.now() - 120_000);

describe('runtime host registration', () => {
  test('when an owner registers a host, then the relay token is returned once and stored only as a hash and a sealed copy', async () => {
    const owner = await t.seedMember('owner');
    const res = await t.client({ token: owner.token }).POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
      params: { path: { workspace: owner.workspace.slug } },
      body: hostBody({
        name: 'edge-1',
        console_router: { bind_host: '127.0.0.1', listen_port: 8790, route_prefix: '/console' },
        relay: { bind_host: '127.0.0.1', listen_port: 8787 },
      }),
    });
    expect(res.response.status).toBe(201);
    expect(res.response.headers.get('cache-control')).toBe('no-store');
    const { host, relay_token: relayToken } = unwrap(res);
    expect(relayToken).toMatch(/^rly_[A-Za-z0-9_-]{43}$/);
    expect(host).toMatchObject({
      workspace_id: owner.workspace.id,
      name: 'edge-1',
      hostname: 'runtime-1.internal',
      workdir_root: '/srv/agents',
      console_public_base_url: 'https://console.example.test',
      relay_public_url: 'https://relay.example.test',
      console_router: { bind_host: '127.0.0.1', listen_port: 8790, route_prefix: '/console' },
      relay: { bind_host: '127.0.0.1', listen_port: 8787 },
      last_heartbeat_at: null,
      runtime_version: null,
      bundles: [],
      readiness: {
        heartbeat_fresh: false,
        relay_ready: false,
        console_router_ready: false,
        spawn_ready: false,
      },
    });
    expect(host.id).toMatch(/^rti_[0-9a-z]{26}$/);
    expect(JSON.stringify(host)).not.toContain(relayToken);

    const row = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } });
    expect(row.relayTokenHash).toBe(hashOpaqueToken(relayToken));
    expect(row.relayTokenCiphertext).not.toContain(relayToken);
    expect(t.hub.deps.box.open(row.relayTokenCiphertext, host.id)).toBe(relayToken);

    const events = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, targetId: host.id },
      orderBy: { id: 'asc' },
    });
    expect(events.map((e) => e.action)).toEqual(['runtime_host.registered', 'credential.relay_token.issued']);
    expect(events[0]).toMatchObject({ actorKind: 'participant', actorId: owner.participantId });

    const api = t.client({ token: owner.token });
    const list = unwrap(
      await api.GET('/api/v1/workspaces/{workspace}/runtime-hosts', {
        params: { path: { workspace: owner.workspace.slug } },
      }),
    );
    expect(list.map((h) => h.id)).toEqual([host.id]);
    const one = unwrap(
      await api.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: host.id } } }),
    );
    expect(one.name).toBe('edge-1');
    expect(JSON.stringify([list, one])).not.toContain(relayToken);
    await expectNoSecretsStored(t, owner.workspace.id, [relayToken]);
  });

  test('when a key with runtime-hosts:write registers a host, then it works; a read-only key or a member cannot', async () => {
    const owner = await t.seedMember('owner');
    const member = await t.seedMember('member', owner.workspace);
    const runtimeKey = await createKey(t, owner, { preset: 'agent-runtime' });
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const params = { path: { workspace: owner.workspace.slug } };
    const byKey = await t
      .client({ apiKey: runtimeKey.key })
      .POST('/api/v1/workspaces/{workspace}/runtime-hosts', { params, body: hostBody() });
    expect(byKey.response.status).toBe(201);
    const events = await t.database.prisma.auditEvent.findMany({
      where: { targetId: byKey.data?.data.host.id, action: 'runtime_host.registered' },
    });
    expect(events[0]).toMatchObject({ actorKind: 'api_key', actorId: runtimeKey.id });

    const byReadOnly = await t
      .client({ apiKey: readOnly.key })
      .POST('/api/v1/workspaces/{workspace}/runtime-hosts', { params, body: hostBody() });
    expect(byReadOnly.error).toMatchObject({
      code: 'scope_missing',
      missing_scopes: ['runtime-hosts:write'],
    });
    const byMember = await t
      .client({ token: member.token })
      .POST('/api/v1/workspaces/{workspace}/runtime-hosts', { params, body: hostBody() });
    expect(byMember.error?.code).toBe('role_forbidden');
    await expectNoSecretsStored(t, owner.workspace.id, [runtimeKey.key, byKey.data?.data.relay_token ?? '']);
  });

  test('when a name is already used in the workspace, then 409; another workspace may use it', async () => {
    const owner = await t.seedMember('owner');
    const other = await t.seedMember('owner');
    await registerHost(t, owner, { name: 'same-name' });
    const dup = await t.client({ token: owner.token }).POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
      params: { path: { workspace: owner.workspace.slug } },
      body: hostBody({ name: 'same-name' }),
    });
    expect(dup.response.status).toBe(409);
    expect(dup.error?.code).toBe('runtime_host_name_taken');
    expect((await registerHost(t, other, { name: 'same-name' })).host.name).toBe('same-name');
  });

  test.each([
    [{ workdir_root: 'srv/agents' }, 'workdir_root_invalid'],
    [{ workdir_root: '/srv/../etc' }, 'workdir_root_invalid'],
    [{ workdir_root: '/' }, 'workdir_root_invalid'],
    [{ console_public_base_url: 'http://console.example.test' }, 'runtime_url_insecure'],
    [{ relay_public_url: 'http://relay.example.test' }, 'runtime_url_insecure'],
    [{ console_public_base_url: 'https://console.example.test/?x=1' }, 'runtime_url_invalid'],
    [{ console_public_base_url: 'https://user:pw@console.example.test' }, 'runtime_url_invalid'],
    [{ console_public_base_url: 'ftp://console.example.test' }, 'runtime_url_invalid'],
    [
      {
        console_router: { bind_host: '127.0.0.1', listen_port: 9000 },
        relay: { bind_host: '0.0.0.0', listen_port: 9000 },
      },
      'runtime_port_conflict',
    ],
    [{ name: 'bad name' }, 'validation_failed'],
    [{ console_router: { route_prefix: 'no-slash' } }, 'validation_failed'],
  ])('when the registration has %j, then 400 %s', async (overrides, code) => {
    const owner = await t.seedMember('owner');
    const res = await t.client({ token: owner.token }).POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
      params: { path: { workspace: owner.workspace.slug } },
      body: hostBody(overrides) as never,
    });
    expect(res.response.status).toBe(400);
    expect(res.error?.code).toBe(code);
    expect(await t.database.prisma.runtimeHost.count({ where: { workspaceId: owner.workspace.id } })).toBe(0);
  });

  test('when settings are left out or given in loose forms, then defaults apply and values are normalized', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, {
      hostname: undefined,
      relay_public_url: undefined,
      workdir_root: '/srv/agents/',
      console_public_base_url: 'http://127.0.0.1:8790/',
    });
    expect(host).toMatchObject({
      hostname: null,
      relay_public_url: null,
      workdir_root: '/srv/agents',
      console_public_base_url: 'http://127.0.0.1:8790',
      console_router: { bind_host: '127.0.0.1', listen_port: 8790, route_prefix: '' },
      relay: { bind_host: '127.0.0.1', listen_port: 8787 },
    });
    const windows = await registerHost(t, owner, {
      workdir_root: 'D:\\agents\\',
      console_public_base_url: 'http://localhost:8790/base/',
    });
    expect(windows.host).toMatchObject({
      workdir_root: 'D:\\agents',
      console_public_base_url: 'http://localhost:8790/base',
    });
  });
});

describe('runtime host lookup', () => {
  test("when someone reads another workspace's host by id, then it is not found", async () => {
    const owner = await t.seedMember('owner');
    const stranger = await t.seedMember('owner');
    const { host } = await registerHost(t, owner);
    const byParticipant = await t
      .client({ token: stranger.token })
      .GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: host.id } } });
    expect(byParticipant.response.status).toBe(404);
    expect(byParticipant.error?.code).toBe('runtime_host_not_found');
    const strangerKey = await createKey(t, stranger, { preset: 'read-only' });
    const byKey = await t
      .client({ apiKey: strangerKey.key })
      .GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: host.id } } });
    expect(byKey.response.status).toBe(404);
    const ownKey = await createKey(t, owner, { preset: 'read-only' });
    const byOwnKey = await t
      .client({ apiKey: ownKey.key })
      .GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: host.id } } });
    expect(byOwnKey.data?.data.id).toBe(host.id);
  });

  test('when a runtime bundle id is used as a host id, then 400 runtime_bundle_id_not_allowed', async () => {
    const owner = await t.seedMember('owner');
    const res = await t
      .client({ token: owner.token })
      .GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: 'wrt_01hx3d9zq4' } } });
    expect(res.response.status).toBe(400);
    expect(res.error?.code).toBe('runtime_bundle_id_not_allowed');
  });

  test('when the heartbeat is stale or the relay is not ready, then the host is not spawn ready and says why', async () => {
    const owner = await t.seedMember('owner');
    const stale = await t.seedHost(owner.workspace.id, { lastHeartbeatAt: STALE() });
    const relayDown = await t.seedHost(owner.workspace.id, { relayReady: false });
    const routerDown = await t.seedHost(owner.workspace.id, { consoleRouterReady: false });
    const api = t.client({ token: owner.token });
    const get = async (hostId: string) =>
      unwrap(await api.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId } } }));

    const staleHost = await get(stale.id);
    // A stale heartbeat's flags are old news: unknown, never ready.
    expect(staleHost.readiness).toMatchObject({
      heartbeat_fresh: false,
      relay_ready: false,
      relay_state: 'unknown',
      console_router_state: 'unknown',
      spawn_ready: false,
    });
    expect(staleHost.readiness.reasons.join(' ')).toContain('no heartbeat');
    const relayHost = await get(relayDown.id);
    expect(relayHost.readiness).toMatchObject({
      heartbeat_fresh: true,
      relay_ready: false,
      spawn_ready: false,
    });
    expect(relayHost.readiness.reasons).toContain('the relay is not ready');
    const routerHost = await get(routerDown.id);
    expect(routerHost.readiness).toMatchObject({
      spawn_ready: true,
      console_router_ready: false,
      console_router_state: 'not_ready',
    });
    expect(routerHost.readiness.causes.map((cause) => cause.code)).toEqual(['console_router_not_ready']);
  });
});

describe('runtime host heartbeat', () => {
  test('when the runtime key heartbeats, then readiness, version and bundle are recorded and the host becomes spawn ready', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner);
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    const api = t.client({ apiKey: key.key });
    const beat = await api.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
      params: { path: { hostId: host.id } },
      body: {
        relay_ready: true,
        console_router_ready: true,
        runtime_version: '1.4.2',
        bundle_id: 'wrt_bundleA1',
      },
    });
    expect(beat.response.status).toBe(200);
    const updated = unwrap(beat);
    expect(updated).toMatchObject({
      id: host.id,
      runtime_version: '1.4.2',
      bundles: ['wrt_bundleA1'],
      readiness: { heartbeat_fresh: true, relay_ready: true, console_router_ready: true, spawn_ready: true },
      // In no runtime environment: no tunnel for its connector to follow.
      tunnel: null,
    });
    expect(updated.last_heartbeat_at).not.toBeNull();
    const bundle = await t.database.prisma.runtimeBundle.findUniqueOrThrow({ where: { id: 'wrt_bundleA1' } });
    expect(bundle).toMatchObject({
      workspaceId: owner.workspace.id,
      runtimeInstanceId: host.id,
      version: '1.4.2',
    });

    const down = unwrap(
      await api.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId: host.id } },
        body: { relay_ready: false, console_router_ready: true, runtime_version: '1.4.3' },
      }),
    );
    expect(down.readiness).toMatchObject({ relay_ready: false, spawn_ready: false });
    expect(down.bundles).toEqual(['wrt_bundleA1']);
  });

  test('when another host of the workspace reports the same bundle, then the bundle moves to it', async () => {
    const owner = await t.seedMember('owner');
    const first = await registerHost(t, owner);
    const second = await registerHost(t, owner);
    const api = t.client({ apiKey: (await createKey(t, owner, { preset: 'agent-runtime' })).key });
    const body = {
      relay_ready: true,
      console_router_ready: true,
      runtime_version: '2.0.0',
      bundle_id: 'wrt_moving1',
    };
    unwrap(
      await api.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId: first.host.id } },
        body,
      }),
    );
    const moved = unwrap(
      await api.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId: second.host.id } },
        body,
      }),
    );
    expect(moved.bundles).toEqual(['wrt_moving1']);
    const firstNow = unwrap(
      await api.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: first.host.id } } }),
    );
    expect(firstNow.bundles).toEqual([]);
  });

  test('when a bundle id already belongs to another workspace, then 409 and nothing changes', async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    const hostA = await registerHost(t, a);
    const hostB = await registerHost(t, b);
    const body = {
      relay_ready: true,
      console_router_ready: true,
      runtime_version: '1',
      bundle_id: 'wrt_shared42',
    };
    unwrap(
      await t
        .client({ apiKey: (await createKey(t, a, { preset: 'agent-runtime' })).key })
        .POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
          params: { path: { hostId: hostA.host.id } },
          body,
        }),
    );
    const clash = await t
      .client({ apiKey: (await createKey(t, b, { preset: 'agent-runtime' })).key })
      .POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId: hostB.host.id } },
        body,
      });
    expect(clash.response.status).toBe(409);
    expect(clash.error?.code).toBe('runtime_bundle_conflict');
    const rowB = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: hostB.host.id } });
    expect(rowB.lastHeartbeatAt).toBeNull();
  });

  test('when a heartbeat names a bundle id as the host, then 400 runtime_bundle_id_not_allowed', async () => {
    const owner = await t.seedMember('owner');
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    const res = await t.client({ apiKey: key.key }).POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
      params: { path: { hostId: 'wrt_bundleA1' } },
      body: { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' },
    });
    expect(res.response.status).toBe(400);
    expect(res.error?.code).toBe('runtime_bundle_id_not_allowed');
  });

  test('when a key of another workspace heartbeats a host, then 404; a read-only key is 403; a malformed bundle id is 400', async () => {
    const owner = await t.seedMember('owner');
    const stranger = await t.seedMember('owner');
    const { host } = await registerHost(t, owner);
    const body = { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' };
    const params = { path: { hostId: host.id } };
    const strangerKey = await createKey(t, stranger, { preset: 'agent-runtime' });
    const byStranger = await t
      .client({ apiKey: strangerKey.key })
      .POST('/api/v1/runtime-hosts/{hostId}/heartbeat', { params, body });
    expect(byStranger.response.status).toBe(404);
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const byReadOnly = await t
      .client({ apiKey: readOnly.key })
      .POST('/api/v1/runtime-hosts/{hostId}/heartbeat', { params, body });
    expect(byReadOnly.error?.code).toBe('scope_missing');
    const ownKey = await createKey(t, owner, { preset: 'agent-runtime' });
    const badBundle = await t
      .client({ apiKey: ownKey.key })
      .POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params,
        body: { ...body, bundle_id: 'rti_notabundle' },
      });
    expect(badBundle.error?.code).toBe('validation_failed');
    const row = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } });
    expect(row.lastHeartbeatAt).toBeNull();
  });
});

describe('relay token rotation', () => {
  test('when an owner rotates the relay token, then the old one stops matching and the new one is shown once', async () => {
    const owner = await t.seedMember('owner');
    const { host, relay_token: oldToken } = await registerHost(t, owner);
    const res = await t
      .client({ token: owner.token })
      .POST('/api/v1/runtime-hosts/{hostId}/relay-token/rotate', { params: { path: { hostId: host.id } } });
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('cache-control')).toBe('no-store');
    const { relay_token: newToken, rotated_at: rotatedAt } = unwrap(res);
    expect(newToken).toMatch(/^rly_/);
    expect(newToken).not.toBe(oldToken);
    const row = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } });
    expect(verifyOpaqueToken(oldToken, row.relayTokenHash)).toBe(false);
    expect(verifyOpaqueToken(newToken, row.relayTokenHash)).toBe(true);
    expect(t.hub.deps.box.open(row.relayTokenCiphertext, host.id)).toBe(newToken);
    expect(row.relayTokenRotatedAt.toISOString()).toBe(rotatedAt);

    const shown = unwrap(
      await t
        .client({ token: owner.token })
        .GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: host.id } } }),
    );
    expect(shown.relay_token_rotated_at).toBe(rotatedAt);
    expect(JSON.stringify(shown)).not.toContain(newToken);
    const events = await t.database.prisma.auditEvent.findMany({
      where: { targetId: host.id, action: 'credential.relay_token.rotated' },
    });
    expect(events).toHaveLength(1);
    await expectNoSecretsStored(t, owner.workspace.id, [oldToken, newToken]);
  });

  test('when a member rotates, then 403 role_forbidden; another workspace owner gets 404; nothing changes', async () => {
    const owner = await t.seedMember('owner');
    const member = await t.seedMember('member', owner.workspace);
    const stranger = await t.seedMember('owner');
    const { host, relay_token: token } = await registerHost(t, owner);
    const params = { path: { hostId: host.id } };
    const byMember = await t
      .client({ token: member.token })
      .POST('/api/v1/runtime-hosts/{hostId}/relay-token/rotate', { params });
    expect(byMember.response.status).toBe(403);
    expect(byMember.error?.code).toBe('role_forbidden');
    const byStranger = await t
      .client({ token: stranger.token })
      .POST('/api/v1/runtime-hosts/{hostId}/relay-token/rotate', { params });
    expect(byStranger.response.status).toBe(404);
    const row = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } });
    expect(verifyOpaqueToken(token, row.relayTokenHash)).toBe(true);
  });
});
