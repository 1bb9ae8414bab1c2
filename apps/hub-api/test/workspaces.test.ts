import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

describe('workspaces', () => {
  test('when a participant lists workspaces, then each membership comes with its role', async () => {
    const owner = await t.seedMember('owner');
    const res = await t.client({ token: owner.token }).GET('/api/v1/workspaces');
    expect(res.data?.data).toEqual([expect.objectContaining({ id: owner.workspace.id, role: 'owner' })]);
  });

  test('when an API key lists workspaces, then it sees its own workspace only', async () => {
    const admin = await t.seedMember('admin');
    await t.seedMember('admin');
    const key = await createKey(t, admin, { preset: 'read-only' });
    const res = await t.client({ apiKey: key.key }).GET('/api/v1/workspaces');
    expect(res.data?.data.map((w) => w.id)).toEqual([admin.workspace.id]);
  });

  test('when a participant creates a workspace, then they own it, and a taken slug is 409', async () => {
    const someone = await t.seedMember('member');
    const api = t.client({ token: someone.token });
    const created = unwrap(
      await api.POST('/api/v1/workspaces', { body: { slug: 'acme-new', name: 'Acme' } }),
    );
    expect(created.role).toBe('owner');
    const again = await api.POST('/api/v1/workspaces', { body: { slug: 'acme-new', name: 'Acme 2' } });
    expect(again.response.status).toBe(409);
    expect(again.error?.code).toBe('workspace_slug_taken');
    const bad = await api.POST('/api/v1/workspaces', { body: { slug: 'Bad Slug!', name: 'x' } });
    expect(bad.error?.code).toBe('validation_failed');
  });
});

describe('workspace members', () => {
  test('when an admin adds a new person, then the account is created and can sign in', async () => {
    const admin = await t.seedMember('admin');
    const res = await t.client({ token: admin.token }).POST('/api/v1/workspaces/{workspace}/members', {
      params: { path: { workspace: admin.workspace.slug } },
      body: { email: 'new.person@example.test', role: 'member', password: 'a-long-initial-password' },
    });
    expect(res.response.status).toBe(201);
    expect(res.data?.data.role).toBe('member');
    await expect(t.login('new.person@example.test', 'a-long-initial-password')).resolves.toMatch(/^eyJ/);
  });

  test('when a person is added without a password, then 400 password_required whether or not the email has an account', async () => {
    const admin = await t.seedMember('admin');
    const other = await t.seedMember('owner');
    const api = t.client({ token: admin.token });
    const params = { path: { workspace: admin.workspace.slug } };
    const existing = await api.POST('/api/v1/workspaces/{workspace}/members', {
      params,
      body: { email: other.email, role: 'viewer' },
    });
    expect(existing.error?.code).toBe('password_required');
    const fresh = await api.POST('/api/v1/workspaces/{workspace}/members', {
      params,
      body: { email: 'fresh@example.test', role: 'viewer' },
    });
    expect(fresh.error?.code).toBe('password_required');
    const ok = await api.POST('/api/v1/workspaces/{workspace}/members', {
      params,
      body: { email: other.email, role: 'viewer', password: 'a-long-initial-password' },
    });
    expect(ok.response.status).toBe(201);
    const dup = await api.POST('/api/v1/workspaces/{workspace}/members', {
      params,
      body: { email: other.email, role: 'viewer', password: 'a-long-initial-password' },
    });
    expect(dup.error?.code).toBe('already_member');
  });

  test('when an admin tries to grant owner, then 403 owner_required', async () => {
    const owner = await t.seedMember('owner');
    const admin = await t.seedMember('admin', owner.workspace);
    const member = await t.seedMember('member', owner.workspace);
    const res = await t
      .client({ token: admin.token })
      .PATCH('/api/v1/workspaces/{workspace}/members/{participantId}', {
        params: { path: { workspace: owner.workspace.slug, participantId: member.participantId } },
        body: { role: 'owner' },
      });
    expect(res.error?.code).toBe('owner_required');
  });

  test('when the last owner would be demoted or removed, then 409 last_owner', async () => {
    const owner = await t.seedMember('owner');
    const api = t.client({ token: owner.token });
    const params = { path: { workspace: owner.workspace.slug, participantId: owner.participantId } };
    const demote = await api.PATCH('/api/v1/workspaces/{workspace}/members/{participantId}', {
      params,
      body: { role: 'admin' },
    });
    expect(demote.error?.code).toBe('last_owner');
    const remove = await api.DELETE('/api/v1/workspaces/{workspace}/members/{participantId}', { params });
    expect(remove.error?.code).toBe('last_owner');
  });

  test('when two owners demote each other at once, then one owner remains', async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner', a.workspace);
    const demote = (actor: typeof a, target: typeof a) =>
      t.client({ token: actor.token }).PATCH('/api/v1/workspaces/{workspace}/members/{participantId}', {
        params: { path: { workspace: a.workspace.slug, participantId: target.participantId } },
        body: { role: 'admin' },
      });
    const results = await Promise.all([demote(a, b), demote(b, a)]);
    const owners = await t.database.prisma.membership.count({
      where: { workspaceId: a.workspace.id, role: 'owner' },
    });
    expect(owners).toBe(1);
    const statuses = results.map((r) => r.response.status).sort();
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
  });

  test('when an owner removes a member, then the member loses access', async () => {
    const owner = await t.seedMember('owner');
    const member = await t.seedMember('member', owner.workspace);
    const res = await t
      .client({ token: owner.token })
      .DELETE('/api/v1/workspaces/{workspace}/members/{participantId}', {
        params: { path: { workspace: owner.workspace.slug, participantId: member.participantId } },
      });
    expect(res.response.status).toBe(204);
    const after = await t.client({ token: member.token }).GET('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: owner.workspace.slug } },
    });
    expect(after.response.status).toBe(403);
  });
});
