import { randomBytes } from 'node:crypto';
import { unwrap } from '@svc/contracts';
import { createSecretBox, parseSecretBoxKeys } from '@svc/service-kit';
import { startFakeCloudflare } from '@svc/testing';
import type { FakeCloudflare } from '@svc/testing';
import { CLOUDFLARE_TOKEN_AAD } from '../src/data/tunnel-providers/cloudflare';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';
import { expectNoSecretsStored, registerHost } from './support/runtime-helpers';

const ZONE = 'svc-tunnels.test';
let fake: FakeCloudflare;
let t: TestHub;

beforeAll(async () => {
  fake = await startFakeCloudflare();
  const keys = `k1:${randomBytes(32).toString('base64')}`;
  const sealed = createSecretBox(parseSecretBoxKeys(keys)).seal(fake.apiToken, CLOUDFLARE_TOKEN_AAD);
  t = await startTestHub({
    settings: {
      HUB_ENCRYPTION_KEYS: keys,
      HUB_TUNNEL_PROVIDER: 'cloudflare',
      HUB_CLOUDFLARE_API_URL: fake.apiUrl,
      HUB_CLOUDFLARE_ACCOUNT_ID: fake.accountId,
      HUB_CLOUDFLARE_ZONE_ID: fake.zoneId,
      HUB_CLOUDFLARE_ZONE_NAME: ZONE,
      HUB_CLOUDFLARE_API_TOKEN_SEALED: sealed,
    },
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const tunnelsPath =
  '/api/v1/workspaces/{workspace}/infrastructure/runtime-environments/{environment}/tunnels';

function provision(
  member: SeededMember,
  environment: string,
  body: { provider?: 'cloudflare' | 'local'; runtime_instance_ids?: string[] } = {},
  credential: { token?: string; apiKey?: string } = { token: member.token },
) {
  return t.client(credential).POST(tunnelsPath, {
    params: { path: { workspace: member.workspace.slug, environment } },
    body,
  });
}

function readTunnel(member: SeededMember, environment: string) {
  return t.client({ token: member.token }).GET(tunnelsPath, {
    params: { path: { workspace: member.workspace.slug, environment } },
  });
}

function deleteTunnel(
  member: SeededMember,
  environment: string,
  credential: { token?: string; apiKey?: string } = { token: member.token },
) {
  return t.client(credential).DELETE(tunnelsPath, {
    params: { path: { workspace: member.workspace.slug, environment } },
  });
}

async function pullConfig(member: SeededMember, hostId: string) {
  return unwrap(
    await t
      .client({ token: member.token })
      .GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-config', {
        params: { path: { workspace: member.workspace.slug }, query: { runtime_instance_id: hostId } },
      }),
  );
}

async function networksHost(member: SeededMember, hostId: string) {
  const view = unwrap(
    await t.client({ token: member.token }).GET('/api/v1/workspaces/{workspace}/networks', {
      params: { path: { workspace: member.workspace.slug } },
    }),
  );
  return view.hosts.find((host) => host.runtime_instance_id === hostId)!;
}

const tunnelsNamed = (name: string) => [...fake.tunnels.values()].filter((tunnel) => tunnel.name === name);
const recordsAt = (name: string) => [...fake.dns.values()].filter((record) => record.name === name);

describe('runtime environment tunnels (Cloudflare, against a local fake of its API)', () => {
  test('when a tunnel is provisioned twice, then there is one tunnel, one set of records and the ingress of the spec; runtime config and Networks carry its hostnames', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, {
      console_router: { listen_port: 8791 },
      relay: { listen_port: 8788 },
    });
    const tunnelName = `svc-${owner.workspace.id}-prod`;
    const consoleHostname = `${owner.workspace.slug}-prod-console.${ZONE}`;
    const relayHostname = `${owner.workspace.slug}-prod-relay.${ZONE}`;

    const first = await provision(owner, 'prod');
    expect(first.response.status).toBe(200);
    const env = unwrap(first);
    const tunnelId = env.tunnel.tunnel_id!;
    expect(env).toMatchObject({
      name: 'prod',
      hosts: [{ runtime_instance_id: host.id, connector_ready: null }],
      tunnel: {
        provider: 'cloudflare',
        state: 'active',
        tunnel_name: tunnelName,
        console_hostname: consoleHostname,
        relay_hostname: relayHostname,
        console_public_base_url: `https://${consoleHostname}`,
        relay_public_base_url: `https://${relayHostname}`,
        last_error: null,
        live: { status: 'inactive', connections: [] },
      },
    });

    // A record created concurrently is found only by the create's 81053: it is compared, then kept.
    fake.hideNextDnsList();
    const second = unwrap(await provision(owner, 'prod'));
    expect(second.tunnel.tunnel_id).toBe(tunnelId);
    expect(tunnelsNamed(tunnelName)).toHaveLength(1);
    expect(fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/cfd_tunnel'))).toHaveLength(
      1,
    );
    expect(fake.requests.some((r) => r.errorCodes.includes(81053))).toBe(true);

    const expectedIngress = [
      { hostname: consoleHostname, service: 'http://127.0.0.1:8791' },
      { hostname: relayHostname, service: 'http://127.0.0.1:8788' },
      { service: 'http_status:404' },
    ];
    expect(fake.tunnels.get(tunnelId)!.config).toEqual({ ingress: expectedIngress });
    expect(second.tunnel.ingress).toEqual(expectedIngress);
    for (const name of [consoleHostname, relayHostname]) {
      expect(recordsAt(name)).toEqual([
        expect.objectContaining({ type: 'CNAME', content: `${tunnelId}.cfargotunnel.com`, proxied: true }),
      ]);
    }
    expect(second.tunnel.dns_records.map((r) => r.id).sort()).toEqual(
      [...recordsAt(consoleHostname), ...recordsAt(relayHostname)].map((r) => r.id).sort(),
    );

    // Live state comes from the provider on every read.
    fake.connect(tunnelId);
    const live = unwrap(await readTunnel(owner, 'prod'));
    expect(live.tunnel.live).toMatchObject({ status: 'healthy', connections: [{ colo_name: 'ams01' }] });

    const config = await pullConfig(owner, host.id);
    expect(config.consoleRouter.publicBaseUrl).toBe(`https://${consoleHostname}`);
    expect(config.relay.publicUrl).toBe(`https://${relayHostname}`);
    expect(config.tunnel).toMatchObject({
      runtime_environment: 'prod',
      provider: 'cloudflare',
      state: 'active',
    });
    const networks = await networksHost(owner, host.id);
    expect(networks.console_public_base_url).toBe(`https://${consoleHostname}`);
    expect(networks.relay_public_url).toBe(`https://${relayHostname}`);

    // The host's runtime key gets the connector token in Cloudflare's format; it is stored sealed only.
    const runtimeKey = await createKey(t, owner, { preset: 'agent-runtime' });
    const connector = await t
      .client({ apiKey: runtimeKey.key })
      .GET('/api/v1/runtime-hosts/{hostId}/tunnel-connector', {
        params: { path: { hostId: host.id } },
      });
    expect(connector.response.headers.get('cache-control')).toBe('no-store');
    const token = unwrap(connector).connector!.token;
    expect(token).toBe(fake.tokenOf(tunnelId));
    expect(JSON.parse(Buffer.from(token, 'base64').toString('utf8'))).toEqual({
      a: fake.accountId,
      t: tunnelId,
      s: expect.any(String),
    });
    const row = await t.database.prisma.runtimeEnvironment.findFirstOrThrow({
      where: { workspaceId: owner.workspace.id },
    });
    expect(row.connectorTokenCiphertext).not.toContain(token);
    expect(JSON.stringify(unwrap(await readTunnel(owner, 'prod')))).not.toContain(token);
    await expectNoSecretsStored(t, owner.workspace.id, [token, fake.apiToken]);

    const actions = (
      await t.database.prisma.auditEvent.findMany({
        where: { workspaceId: owner.workspace.id, targetType: 'runtime_environment' },
        orderBy: { createdAt: 'asc' },
      })
    ).map((event) => event.action);
    expect(actions).toEqual([
      'runtime_environment.created',
      'tunnel.provisioned',
      'tunnel.provisioned',
      'credential.tunnel_token.read',
    ]);
  });

  test('when the tunnel list lags behind a create, then the name conflict (1013) with our own tunnel is not an error', async () => {
    const owner = await t.seedMember('owner');
    await registerHost(t, owner);
    const first = unwrap(await provision(owner, 'lag'));
    // The hub forgets the id it stored; the next list does not show the tunnel yet.
    await t.database.prisma.runtimeEnvironment.updateMany({
      where: { workspaceId: owner.workspace.id },
      data: { tunnelId: null },
    });
    fake.hideNextTunnelList();
    const again = unwrap(await provision(owner, 'lag'));
    expect(again.tunnel.tunnel_id).toBe(first.tunnel.tunnel_id);
    expect(fake.requests.some((r) => r.errorCodes.includes(1013))).toBe(true);
    expect(tunnelsNamed(`svc-${owner.workspace.id}-lag`)).toHaveLength(1);
  });

  test('when a DNS record of someone else holds the hostname, then 409 tunnel_dns_record_conflict, the record is untouched and the tunnel is failed with the error kept', async () => {
    const owner = await t.seedMember('owner');
    await registerHost(t, owner);
    const consoleHostname = `${owner.workspace.slug}-taken-console.${ZONE}`;
    fake.dns.set('foreign', {
      id: 'foreign',
      zone_id: fake.zoneId,
      name: consoleHostname,
      type: 'A',
      content: '192.0.2.7',
      proxied: false,
      ttl: 300,
    });
    const res = await provision(owner, 'taken');
    expect(res.response.status).toBe(409);
    expect(res.error).toMatchObject({
      code: 'tunnel_dns_record_conflict',
      hostname: consoleHostname,
      existing: { type: 'A', content: '192.0.2.7', proxied: false },
    });
    expect(fake.dns.get('foreign')).toMatchObject({ type: 'A', content: '192.0.2.7' });
    const env = unwrap(await readTunnel(owner, 'taken'));
    expect(env.tunnel.state).toBe('failed');
    expect(env.tunnel.last_error).toMatchObject({ code: 'tunnel_dns_record_conflict' });
    const failed = await t.database.prisma.auditEvent.count({
      where: { workspaceId: owner.workspace.id, action: 'tunnel.provision_failed' },
    });
    expect(failed).toBe(1);

    // Deleting the failed tunnel removes the tunnel it had created and the record it had made, not the foreign one.
    const removed = await deleteTunnel(owner, 'taken');
    expect(removed.response.status).toBe(200);
    expect(tunnelsNamed(`svc-${owner.workspace.id}-taken`).every((tunnel) => tunnel.deleted_at)).toBe(true);
    expect(recordsAt(`${owner.workspace.slug}-taken-relay.${ZONE}`)).toEqual([]);
    expect(fake.dns.has('foreign')).toBe(true);
    fake.dns.delete('foreign');
  });

  test("when the tunnel is deleted with a connection still open, then connections are cleaned up (cascade after 1022), the tunnel and our records are gone, and the hosts' own URLs apply again", async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, {
      console_public_base_url: 'https://own-console.example.test',
      relay_public_url: 'https://own-relay.example.test',
    });
    const env = unwrap(await provision(owner, 'gone'));
    const tunnelId = env.tunnel.tunnel_id!;
    fake.connect(tunnelId, { reconnects: true });
    const before = fake.requests.length;

    const res = await deleteTunnel(owner, 'gone');
    expect(res.response.status).toBe(200);
    expect(unwrap(res).tunnel).toMatchObject({
      provider: null,
      state: 'none',
      tunnel_id: null,
      dns_records: [],
      console_public_base_url: null,
    });
    const calls = fake.requests
      .slice(before)
      .map((r) =>
        `${r.method} ${r.path}${r.query.cascade ? '?cascade' : ''} ${r.errorCodes.join(',')}`.trim(),
      );
    expect(calls).toEqual(
      expect.arrayContaining([
        `DELETE /accounts/${fake.accountId}/cfd_tunnel/${tunnelId}/connections`,
        `DELETE /accounts/${fake.accountId}/cfd_tunnel/${tunnelId} 1022`,
        `DELETE /accounts/${fake.accountId}/cfd_tunnel/${tunnelId}?cascade`,
      ]),
    );
    // Verified with a read after the delete.
    expect(calls[calls.length - 1]).toBe(`GET /accounts/${fake.accountId}/cfd_tunnel/${tunnelId}`);
    expect(fake.tunnels.get(tunnelId)!.deleted_at).not.toBeNull();
    expect(recordsAt(env.tunnel.console_hostname!)).toEqual([]);
    expect(recordsAt(env.tunnel.relay_hostname!)).toEqual([]);

    const config = await pullConfig(owner, host.id);
    expect(config.consoleRouter.publicBaseUrl).toBe('https://own-console.example.test');
    expect(config.relay.publicUrl).toBe('https://own-relay.example.test');
    const deleted = await t.database.prisma.auditEvent.findFirstOrThrow({
      where: { workspaceId: owner.workspace.id, action: 'tunnel.deleted' },
    });
    expect(deleted.data).toMatchObject({ name: 'gone', provider: 'cloudflare', tunnel_id: tunnelId });

    // Deleting again changes nothing.
    const again = await deleteTunnel(owner, 'gone');
    expect(again.response.status).toBe(200);
    expect(
      await t.database.prisma.auditEvent.count({
        where: { workspaceId: owner.workspace.id, action: 'tunnel.deleted' },
      }),
    ).toBe(1);
  });

  test('when the local provider is asked, then the public URLs are the loopback addresses of the router and the relay', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner, {
      console_router: { listen_port: 18790 },
      relay: { listen_port: 18787 },
    });
    const env = unwrap(await provision(owner, 'dev', { provider: 'local', runtime_instance_ids: [host.id] }));
    expect(env.tunnel).toMatchObject({
      provider: 'local',
      state: 'active',
      tunnel_id: null,
      console_public_base_url: 'http://127.0.0.1:18790',
      relay_public_base_url: 'http://127.0.0.1:18787',
      dns_records: [],
    });
    const config = await pullConfig(owner, host.id);
    expect(config.consoleRouter.publicBaseUrl).toBe('http://127.0.0.1:18790');
    expect((await networksHost(owner, host.id)).console_public_base_url).toBe('http://127.0.0.1:18790');
    // A local tunnel needs no connector.
    const runtimeKey = await createKey(t, owner, { preset: 'agent-runtime' });
    const connector = unwrap(
      await t.client({ apiKey: runtimeKey.key }).GET('/api/v1/runtime-hosts/{hostId}/tunnel-connector', {
        params: { path: { hostId: host.id } },
      }),
    );
    expect(connector).toEqual({ runtime_instance_id: host.id, runtime_environment: 'dev', connector: null });
    // Another provider while this one is active must wait for a delete.
    const change = await provision(owner, 'dev', { provider: 'cloudflare' });
    expect(change.response.status).toBe(409);
    expect(change.error).toMatchObject({ code: 'tunnel_provider_change' });
  });

  test('when provisioning and deleting, then only owners, admins and keys holding admin:tunnels may; broad keys are refused', async () => {
    const owner = await t.seedMember('owner');
    const { host } = await registerHost(t, owner);
    const member = await t.seedMember('member', owner.workspace);
    expect((await provision(member, 'x', { provider: 'local' })).response.status).toBe(403);
    for (const preset of ['automation', 'agent-runtime'] as const) {
      const key = await createKey(t, owner, { preset });
      const res = await provision(owner, 'x', { provider: 'local' }, { apiKey: key.key });
      expect(res.response.status).toBe(403);
      expect(res.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['admin:tunnels'] });
      expect((await deleteTunnel(owner, 'x', { apiKey: key.key })).response.status).toBe(403);
    }
    const admin = await createKey(t, owner, { scopes: ['admin:tunnels'] });
    const made = await provision(
      owner,
      'x',
      { provider: 'local', runtime_instance_ids: [host.id] },
      { apiKey: admin.key },
    );
    expect(made.response.status).toBe(200);
    expect((await deleteTunnel(owner, 'x', { apiKey: admin.key })).response.status).toBe(200);
    const events = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, actorId: admin.id, action: { startsWith: 'tunnel.' } },
    });
    expect(events.map((event) => event.action).sort()).toEqual(['tunnel.deleted', 'tunnel.provisioned']);
    // A host is in one environment at most.
    const other = await provision(owner, 'y', { provider: 'local', runtime_instance_ids: [host.id] });
    expect(other.response.status).toBe(409);
    expect(other.error).toMatchObject({ code: 'runtime_host_in_other_environment' });
  });
});
