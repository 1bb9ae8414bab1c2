import { createKey, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

describe('GET /api/v1/contract', () => {
  test('when a key holds contract:read, then it gets its workspace and the redacted integration document', async () => {
    const admin = await t.seedMember('admin');
    const created = await createKey(t, admin, { scopes: ['contract:read'] });
    const res = await t.client({ apiKey: created.key }).GET('/api/v1/contract');
    expect(res.response.status).toBe(200);
    const { workspace, openapi } = res.data!.data;
    expect(workspace).toEqual({ id: admin.workspace.id, slug: admin.workspace.slug });
    expect(openapi.openapi).toBe('3.1.0');
    const paths = Object.keys(openapi.paths as object);
    expect(paths).toContain('/api/v1/contract');
    expect(paths).toContain('/api/v1/workspaces/{workspace}/projects');
    expect(paths.some((p) => p.startsWith('/internal'))).toBe(false);
    // Routes used only by the signed-in application are not part of the integration boundary.
    expect(paths).not.toContain('/api/v1/auth/login');
    expect(paths).not.toContain('/api/v1/workspaces/{workspace}/api-keys');
    const text = JSON.stringify(openapi);
    expect(text).not.toMatch(/"examples?":/);
    expect(
      (openapi.paths as Record<string, { servers: { url: string }[] }>)['/api/v1/contract']?.servers,
    ).toEqual([{ url: 'http://hub.test' }]);
  });

  test('when the key lacks contract:read, then 403 scope_missing names it', async () => {
    const admin = await t.seedMember('admin');
    const created = await createKey(t, admin, { scopes: ['projects:read'] });
    const res = await t.client({ apiKey: created.key }).GET('/api/v1/contract');
    expect(res.response.status).toBe(403);
    expect(res.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['contract:read'] });
  });

  test('when no credential is sent, then 401', async () => {
    const res = await t.client().GET('/api/v1/contract');
    expect(res.response.status).toBe(401);
    expect(res.error?.code).toBe('credential_missing');
  });

  test('when a participant token is sent, then 403: the contract is for workspace automation', async () => {
    const admin = await t.seedMember('admin');
    const res = await t.client({ token: admin.token }).GET('/api/v1/contract');
    expect(res.response.status).toBe(403);
    expect(res.error?.code).toBe('actor_not_allowed');
  });

  test('when contract:read is held alone, then the described operations stay closed', async () => {
    const admin = await t.seedMember('admin');
    const created = await createKey(t, admin, { scopes: ['contract:read'] });
    const res = await t.client({ apiKey: created.key }).GET('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: admin.workspace.slug } },
    });
    expect(res.response.status).toBe(403);
  });
});
