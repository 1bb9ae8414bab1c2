import { unwrap } from '@svc/contracts';
import { auditRows } from './support/agents-fixtures';
import { createKey, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

describe('projects', () => {
  test('when a member creates a project, then it is listed and readable by id', async () => {
    const member = await t.seedMember('member');
    const api = t.client({ token: member.token });
    const created = unwrap(
      await api.POST('/api/v1/workspaces/{workspace}/projects', {
        params: { path: { workspace: member.workspace.slug } },
        body: { code: 'OPS', name: 'Operations' },
      }),
    );
    expect(created).toMatchObject({ code: 'OPS', workspace_id: member.workspace.id });
    const list = unwrap(
      await api.GET('/api/v1/workspaces/{workspace}/projects', {
        params: { path: { workspace: member.workspace.id } },
      }),
    );
    expect(list.map((p) => p.id)).toEqual([created.id]);
    const one = unwrap(
      await api.GET('/api/v1/projects/{projectId}', { params: { path: { projectId: created.id } } }),
    );
    expect(one.name).toBe('Operations');
  });

  test('when an automation key creates a project, then it works, and a duplicate code is 409', async () => {
    const admin = await t.seedMember('admin');
    const key = await createKey(t, admin, { preset: 'automation' });
    const api = t.client({ apiKey: key.key });
    const params = { path: { workspace: admin.workspace.slug } };
    expect(
      (await api.POST('/api/v1/workspaces/{workspace}/projects', { params, body: { code: 'X1', name: 'x' } }))
        .response.status,
    ).toBe(201);
    const dup = await api.POST('/api/v1/workspaces/{workspace}/projects', {
      params,
      body: { code: 'X1', name: 'y' },
    });
    expect(dup.response.status).toBe(409);
    expect(dup.error?.code).toBe('project_code_taken');
  });

  test('when a viewer or a read-only key creates a project, then 403', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const params = { path: { workspace: owner.workspace.slug } };
    const byViewer = await t.client({ token: viewer.token }).POST('/api/v1/workspaces/{workspace}/projects', {
      params,
      body: { code: 'V', name: 'v' },
    });
    expect(byViewer.error?.code).toBe('role_forbidden');
    const byKey = await t.client({ apiKey: readOnly.key }).POST('/api/v1/workspaces/{workspace}/projects', {
      params,
      body: { code: 'V', name: 'v' },
    });
    expect(byKey.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['projects:write'] });
  });

  test("when someone reads another workspace's project by id, then it is not found", async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    const project = unwrap(
      await t.client({ token: a.token }).POST('/api/v1/workspaces/{workspace}/projects', {
        params: { path: { workspace: a.workspace.slug } },
        body: { code: 'SECRET', name: 'hidden' },
      }),
    );
    const byParticipant = await t.client({ token: b.token }).GET('/api/v1/projects/{projectId}', {
      params: { path: { projectId: project.id } },
    });
    expect(byParticipant.response.status).toBe(404);
    const keyB = await createKey(t, b, { preset: 'read-only' });
    const byKey = await t
      .client({ apiKey: keyB.key })
      .GET('/api/v1/projects/{projectId}', { params: { path: { projectId: project.id } } });
    expect(byKey.response.status).toBe(404);
  });

  test('when the project code is malformed, then 400 names the field', async () => {
    const member = await t.seedMember('member');
    const res = await t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: member.workspace.slug } },
      body: { code: 'has space', name: 'x' },
    });
    expect(res.error?.errors?.[0]?.location).toBe('body/code');
  });

  test('when a member renames and archives a project, then it keeps its code, leaves the default list, is audited once per change, and comes back on unarchive', async () => {
    const member = await t.seedMember('member');
    const api = t.client({ token: member.token });
    const ws = { path: { workspace: member.workspace.id } };
    const made = unwrap(
      await api.POST('/api/v1/workspaces/{workspace}/projects', {
        params: { path: { workspace: member.workspace.slug } },
        body: { code: 'DEV-2', name: 'Development' },
      }),
    );
    expect(made.archived_at).toBeNull();
    const path = { path: { projectId: made.id } };
    const renamed = unwrap(
      await api.PATCH('/api/v1/projects/{projectId}', { params: path, body: { name: 'Dev two' } }),
    );
    expect(renamed).toMatchObject({ id: made.id, code: 'DEV-2', name: 'Dev two' });
    const [renameAudit] = await auditRows(t, 'project.renamed', made.id);
    expect(renameAudit).toMatchObject({ data: { from: 'Development', to: 'Dev two' } });

    const archived = unwrap(await api.POST('/api/v1/projects/{projectId}/archive', { params: path }));
    expect(archived.archived_at).toEqual(expect.any(String));
    const again = unwrap(await api.POST('/api/v1/projects/{projectId}/archive', { params: path }));
    expect(again.archived_at).toBe(archived.archived_at);
    expect(await auditRows(t, 'project.archived', made.id)).toHaveLength(1);

    const listed = unwrap(await api.GET('/api/v1/workspaces/{workspace}/projects', { params: ws }));
    expect(listed.map((p) => p.id)).not.toContain(made.id);
    const all = unwrap(
      await api.GET('/api/v1/workspaces/{workspace}/projects', {
        params: { ...ws, query: { include_archived: true } },
      }),
    );
    expect(all.find((p) => p.id === made.id)?.archived_at).toBe(archived.archived_at);
    // Read by id, an archived project is still there.
    expect(unwrap(await api.GET('/api/v1/projects/{projectId}', { params: path })).name).toBe('Dev two');

    const back = unwrap(await api.POST('/api/v1/projects/{projectId}/unarchive', { params: path }));
    expect(back.archived_at).toBeNull();
    expect(await auditRows(t, 'project.unarchived', made.id)).toHaveLength(1);
    const relisted = unwrap(await api.GET('/api/v1/workspaces/{workspace}/projects', { params: ws }));
    expect(relisted.map((p) => p.id)).toContain(made.id);
  });

  test('when a viewer or a read-only key renames or archives a project, then 403 and nothing changes; an empty name is 400', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const made = unwrap(
      await t.client({ token: owner.token }).POST('/api/v1/workspaces/{workspace}/projects', {
        params: { path: { workspace: owner.workspace.slug } },
        body: { code: 'KEEP', name: 'Kept' },
      }),
    );
    const path = { path: { projectId: made.id } };
    const byViewer = t.client({ token: viewer.token });
    expect((await byViewer.POST('/api/v1/projects/{projectId}/archive', { params: path })).error?.code).toBe(
      'role_forbidden',
    );
    expect(
      (await byViewer.PATCH('/api/v1/projects/{projectId}', { params: path, body: { name: 'x' } })).error
        ?.code,
    ).toBe('role_forbidden');
    const byKey = await t
      .client({ apiKey: readOnly.key })
      .POST('/api/v1/projects/{projectId}/archive', { params: path });
    expect(byKey.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['projects:write'] });
    const empty = await t
      .client({ token: owner.token })
      .PATCH('/api/v1/projects/{projectId}', { params: path, body: { name: '' } });
    expect(empty.response.status).toBe(400);
    const now = unwrap(
      await t.client({ token: owner.token }).GET('/api/v1/projects/{projectId}', { params: path }),
    );
    expect(now).toMatchObject({ name: 'Kept', archived_at: null });
  });
});
