import { SCOPE_PRESETS } from '@svc/auth';
import { createKey, secretOf, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

/** The secret part of `svc_<12-char prefix>_<secret>` (the secret itself may contain `_`). */

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

describe('workspace API keys', () => {
  test('when an admin creates a key from a preset, then the secret is shown once and stored only as a hash', async () => {
    const admin = await t.seedMember('admin');
    const created = await createKey(t, admin, { preset: 'automation' });
    expect(created.key).toMatch(/^svc_[a-z0-9]{12}_/);
    expect(created.scopes).toEqual([...SCOPE_PRESETS.automation]);
    expect(created.preset).toBe('automation');

    const list = await t.client({ token: admin.token }).GET('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: admin.workspace.id } },
    });
    expect(list.data?.data).toHaveLength(1);
    expect(JSON.stringify(list.data)).not.toContain(secretOf(created.key));
    const row = await t.database.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(JSON.stringify(row)).not.toContain(secretOf(created.key));
    expect(row.secretHash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('when explicit scopes are given, then they are stored sorted and de-duplicated', async () => {
    const admin = await t.seedMember('owner');
    const created = await createKey(t, admin, {
      scopes: ['workflows:run', 'contract:read', 'workflows:run'],
    });
    expect(created.scopes).toEqual(['contract:read', 'workflows:run']);
    expect(created.preset).toBeNull();
  });

  test('when scopes are unknown, or both or neither of preset and scopes are given, then 400 says which', async () => {
    const admin = await t.seedMember('admin');
    const api = t.client({ token: admin.token });
    const path = { path: { workspace: admin.workspace.slug } };
    const unknown = await api.POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: path,
      body: { name: 'k', scopes: ['root:all'] },
    });
    expect(unknown.error).toMatchObject({ code: 'unknown_scopes', unknown_scopes: ['root:all'] });
    const both = await api.POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: path,
      body: { name: 'k', preset: 'read-only', scopes: ['contract:read'] },
    });
    expect(both.error?.code).toBe('preset_or_scopes_required');
    const neither = await api.POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: path,
      body: { name: 'k' },
    });
    expect(neither.error?.code).toBe('preset_or_scopes_required');
    const past = await api.POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: path,
      body: { name: 'k', preset: 'read-only', expires_at: '2001-01-01T00:00:00Z' },
    });
    expect(past.error?.code).toBe('expiry_in_past');
  });

  test('when a member who is not an admin creates a key, then 403 role_forbidden', async () => {
    const owner = await t.seedMember('owner');
    const member = await t.seedMember('member', owner.workspace);
    const res = await t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: owner.workspace.slug } },
      body: { name: 'k', preset: 'read-only' },
    });
    expect(res.response.status).toBe(403);
    expect(res.error?.code).toBe('role_forbidden');
  });

  test('when an admin of another workspace manages keys here, then 403 workspace_forbidden', async () => {
    const here = await t.seedMember('admin');
    const elsewhere = await t.seedMember('admin');
    const res = await t.client({ token: elsewhere.token }).GET('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: here.workspace.slug } },
    });
    expect(res.response.status).toBe(403);
    expect(res.error?.code).toBe('workspace_forbidden');
  });

  test('when a key is revoked, then it stops working at once and revoking again is harmless', async () => {
    const admin = await t.seedMember('admin');
    const created = await createKey(t, admin, { scopes: ['contract:read'] });
    const keyApi = t.client({ apiKey: created.key });
    expect((await keyApi.GET('/api/v1/contract')).response.status).toBe(200);
    const api = t.client({ token: admin.token });
    const params = { path: { workspace: admin.workspace.slug, keyId: created.id } };
    const revoked = await api.DELETE('/api/v1/workspaces/{workspace}/api-keys/{keyId}', { params });
    expect(revoked.data?.data.revoked_at).not.toBeNull();
    expect((await keyApi.GET('/api/v1/contract')).response.status).toBe(401);
    const again = await api.DELETE('/api/v1/workspaces/{workspace}/api-keys/{keyId}', { params });
    expect(again.data?.data.revoked_at).toBe(revoked.data?.data.revoked_at);
    const listed = await api.GET('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: params.path },
    });
    expect(listed.data?.data.find((k) => k.id === created.id)).toBeUndefined();
    const all = await api.GET('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: params.path, query: { include_revoked: true } },
    });
    expect(all.data?.data.find((k) => k.id === created.id)).toBeDefined();
  });

  test('when a key has expired, then it is refused', async () => {
    const admin = await t.seedMember('admin');
    const created = await createKey(t, admin, {
      scopes: ['contract:read'],
      expires_at: new Date(Date.now() + 60_000).toISOString(),
    });
    await t.database.prisma.apiKey.update({
      where: { id: created.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await t.client({ apiKey: created.key }).GET('/api/v1/contract')).response.status).toBe(401);
  });

  test('when a key of one workspace asks for a key id of another, then 404', async () => {
    const a = await t.seedMember('admin');
    const b = await t.seedMember('admin');
    const other = await createKey(t, b, { preset: 'read-only' });
    const res = await t.client({ token: a.token }).GET('/api/v1/workspaces/{workspace}/api-keys/{keyId}', {
      params: { path: { workspace: a.workspace.slug, keyId: other.id } },
    });
    expect(res.response.status).toBe(404);
  });

  test('when keys are created and used, then the key never appears in logs or audit events', async () => {
    const admin = await t.seedMember('admin');
    const created = await createKey(t, admin, { scopes: ['contract:read'] });
    await t.client({ apiKey: created.key }).GET('/api/v1/contract');
    const secret = secretOf(created.key);
    expect(t.logs.join('')).not.toContain(secret);
    const events = await t.database.prisma.auditEvent.findMany({ where: { targetId: created.id } });
    expect(events.map((e) => e.action)).toContain('api_key.created');
    expect(JSON.stringify(events)).not.toContain(secret);
  });
});
