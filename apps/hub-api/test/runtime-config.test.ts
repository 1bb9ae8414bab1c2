import { SCOPE_PRESETS } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';
import { expectNoSecretsStored, registerHost } from './support/runtime-helpers';

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
      revoked_api_key_id: null,
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

  test('when a participant pulls, then a runtime key is minted for the host and the previous one is revoked', async () => {
    const owner = await t.seedMember('owner');
    const admin = await t.seedMember('admin', owner.workspace);
    const { host, relay_token: relayToken } = await registerHost(t, owner, { name: 'edge-rot' });

    const first = unwrap(await pull(owner, { token: owner.token }, host.id));
    const firstKey = first.auth.workspace_api_key;
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
    });
    expect(
      (await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } })).runtimeApiKeyId,
    ).toBe(minted.id);
    // The minted key is a working agent-runtime key: it can pull the config itself.
    expect(unwrap(await pull(owner, { apiKey: firstKey }, host.id)).auth.workspace_api_key).toBe(firstKey);

    const second = unwrap(await pull(admin, { token: admin.token }, host.id));
    const secondKey = second.auth.workspace_api_key;
    expect(secondKey).not.toBe(firstKey);
    expect((await keys.findUniqueOrThrow({ where: { id: minted.id } })).revokedAt).not.toBeNull();
    const live = await keys.findMany({ where: { workspaceId: owner.workspace.id, revokedAt: null } });
    expect(live.map((k) => k.name)).toEqual(['runtime edge-rot']);
    expect(live[0]?.createdById).toBe(admin.participantId);
    const stale = await pull(owner, { apiKey: firstKey }, host.id);
    expect(stale.response.status).toBe(401);

    const events = await t.database.prisma.auditEvent.findMany({
      where: {
        workspaceId: owner.workspace.id,
        action: { in: ['runtime_config.pulled', 'api_key.created', 'api_key.revoked'] },
      },
      orderBy: { id: 'asc' },
    });
    expect(events.map((e) => e.action)).toEqual([
      'api_key.created',
      'runtime_config.pulled',
      'runtime_config.pulled',
      'api_key.created',
      'api_key.revoked',
      'runtime_config.pulled',
    ]);
    const pulls = events.filter((e) => e.action === 'runtime_config.pulled').map((e) => e.data);
    expect(pulls).toEqual([
      { runtime_instance_id: host.id, api_key_minted: true, api_key_id: minted.id, revoked_api_key_id: null },
      {
        runtime_instance_id: host.id,
        api_key_minted: false,
        api_key_id: minted.id,
        revoked_api_key_id: null,
      },
      {
        runtime_instance_id: host.id,
        api_key_minted: true,
        api_key_id: live[0]?.id,
        revoked_api_key_id: minted.id,
      },
    ]);

    const listed = await t.client({ token: owner.token }).GET('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: owner.workspace.slug }, query: { include_revoked: true } },
    });
    const listedText = JSON.stringify(listed.data);
    expect(listedText).toContain('runtime edge-rot');
    expect(listedText).not.toContain(firstKey);
    expect(listedText).not.toContain(secondKey);
    await expectNoSecretsStored(t, owner.workspace.id, [relayToken, firstKey, secondKey]);
  });

  test('when participants pull the same host concurrently, then exactly one runtime key stays live', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, { name: 'edge-race' });
    const results = await Promise.all([1, 2, 3, 4].map(() => pull(owner, { token: owner.token }, host.id)));
    expect(results.map((r) => r.response.status)).toEqual([200, 200, 200, 200]);
    const live = await t.database.prisma.apiKey.findMany({
      where: { workspaceId: owner.workspace.id, revokedAt: null },
    });
    expect(live).toHaveLength(1);
    const row = await t.database.prisma.runtimeHost.findUniqueOrThrow({ where: { id: host.id } });
    expect(row.runtimeApiKeyId).toBe(live[0]?.id);
    expect(await t.database.prisma.apiKey.count({ where: { workspaceId: owner.workspace.id } })).toBe(4);
  });

  test('when two hosts are pulled by a participant, then each keeps its own runtime key', async () => {
    const owner = await t.seedMember('owner');
    const a = await registerHost(t, owner, { name: 'host-a' });
    const b = await registerHost(t, owner, { name: 'host-b' });
    unwrap(await pull(owner, { token: owner.token }, a.host.id));
    unwrap(await pull(owner, { token: owner.token }, b.host.id));
    const live = await t.database.prisma.apiKey.findMany({
      where: { workspaceId: owner.workspace.id, revokedAt: null },
      orderBy: { name: 'asc' },
    });
    expect(live.map((k) => k.name)).toEqual(['runtime host-a', 'runtime host-b']);
  });

  test('when a member or a viewer pulls, then 403 role_forbidden and no key is minted', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner);
    for (const role of ['member', 'viewer'] as const) {
      const person = await t.seedMember(role, owner.workspace);
      const res = await pull(person, { token: person.token }, host.id);
      expect(res.response.status).toBe(403);
      expect(res.error?.code).toBe('role_forbidden');
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
