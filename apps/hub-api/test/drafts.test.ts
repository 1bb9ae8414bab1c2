import { ALL_SCOPES } from '@svc/auth';
import { hubDocument, unwrap } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import { createKey, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

const draftsPath = '/api/v1/workspaces/{workspace}/control/workflow-drafts';

describe('workflow drafts', () => {
  test('when a member creates a draft, then it is a draft, listed, audited, and nothing else was created', async () => {
    const member = await t.seedMember('member');
    const project = await t.database.prisma.project.create({
      data: { id: newId('prj'), workspaceId: member.workspace.id, code: 'CTL', name: 'Control' },
    });
    const api = t.client({ token: member.token });
    const params = { path: { workspace: member.workspace.slug } };
    const res = await api.POST(draftsPath, {
      params,
      body: {
        intent: '  Summarize the open incidents every morning  ',
        title: 'Morning incidents',
        project_id: project.id,
      },
    });
    expect(res.response.status).toBe(201);
    const draft = res.data!.data;
    expect(draft).toMatchObject({
      status: 'draft',
      title: 'Morning incidents',
      intent: 'Summarize the open incidents every morning',
      project_id: project.id,
      workspace_id: member.workspace.id,
      created_by: member.participantId,
    });
    const list = unwrap(await api.GET(draftsPath, { params }));
    expect(list.map((d) => d.id)).toEqual([draft.id]);
    const event = await t.database.prisma.auditEvent.findFirstOrThrow({ where: { targetId: draft.id } });
    expect(event).toMatchObject({ action: 'workflow_draft.created', actorKind: 'participant' });
    // A draft launches nothing: no handoff (stage assignment) and no other draft state appeared.
    expect(await t.database.prisma.handoff.count({ where: { workspaceId: member.workspace.id } })).toBe(0);
    expect(
      await t.database.prisma.workflowDraft.findUniqueOrThrow({ where: { id: draft.id } }),
    ).toMatchObject({
      status: 'draft',
    });
  });

  test('when no title is given, then the first line of the intent is the title (cut to 80 characters)', async () => {
    const member = await t.seedMember('member');
    const params = { path: { workspace: member.workspace.slug } };
    const api = t.client({ token: member.token });
    const short = unwrap(
      await api.POST(draftsPath, { params, body: { intent: '\n  Triage   new bugs\nthen label them' } }),
    );
    expect(short.title).toBe('Triage new bugs');
    const long = unwrap(await api.POST(draftsPath, { params, body: { intent: 'x'.repeat(300) } }));
    expect(long.title).toHaveLength(80);
    expect(long.title.endsWith('…')).toBe(true);
  });

  test('when drafts are listed by project and in pages, then only those come back, oldest first', async () => {
    const member = await t.seedMember('member');
    const project = await t.database.prisma.project.create({
      data: { id: newId('prj'), workspaceId: member.workspace.id, code: 'P', name: 'P' },
    });
    const params = { path: { workspace: member.workspace.slug } };
    const api = t.client({ token: member.token });
    const d1 = unwrap(await api.POST(draftsPath, { params, body: { intent: 'one' } }));
    const d2 = unwrap(
      await api.POST(draftsPath, { params, body: { intent: 'two', project_id: project.id } }),
    );
    const d3 = unwrap(await api.POST(draftsPath, { params, body: { intent: 'three' } }));
    const list = async (query: Record<string, string | number>) =>
      unwrap(await api.GET(draftsPath, { params: { ...params, query } })).map((d) => d.id);
    expect(await list({ project_id: project.id })).toEqual([d2.id]);
    expect(await list({ limit: 2 })).toEqual([d1.id, d2.id]);
    expect(await list({ after: d2.id })).toEqual([d3.id]);
  });

  test('when the project is of another workspace or the intent is blank, then 400', async () => {
    const member = await t.seedMember('member');
    const other = await t.seedMember('owner');
    const foreign = await t.database.prisma.project.create({
      data: { id: newId('prj'), workspaceId: other.workspace.id, code: 'F', name: 'F' },
    });
    const params = { path: { workspace: member.workspace.slug } };
    const api = t.client({ token: member.token });
    const wrongProject = await api.POST(draftsPath, {
      params,
      body: { intent: 'x', project_id: foreign.id },
    });
    expect({ status: wrongProject.response.status, code: wrongProject.error?.code }).toEqual({
      status: 400,
      code: 'project_not_found',
    });
    const blank = await api.POST(draftsPath, { params, body: { intent: '   ' } });
    expect(blank.error?.errors?.[0]?.location).toBe('body/intent');
  });

  test('when an API key, an agent or a viewer creates a draft, then 403: it takes an authorized participant session', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const key = await createKey(t, owner, { scopes: [...ALL_SCOPES] });
    const agent = await t.seedAgent(owner.workspace.id);
    const params = { path: { workspace: owner.workspace.slug } };
    const body = { intent: 'do things' };
    const byKey = await t.client({ apiKey: key.key }).POST(draftsPath, { params, body });
    expect(byKey.error?.code).toBe('actor_not_allowed');
    const byAgent = await t.client({ token: agent.token }).POST(draftsPath, { params, body });
    expect(byAgent.error?.code).toBe('actor_not_allowed');
    const byViewer = await t.client({ token: viewer.token }).POST(draftsPath, { params, body });
    expect(byViewer.error?.code).toBe('role_forbidden');
    // Viewers may still read drafts.
    expect((await t.client({ token: viewer.token }).GET(draftsPath, { params })).response.status).toBe(200);
  });

  test('when the contract is read, then no operation launches a draft and the create operation says so', () => {
    const paths = Object.keys(hubDocument.paths ?? {});
    expect(paths.filter((p) => p.includes('workflow-drafts'))).toEqual([draftsPath]);
    const item = (hubDocument.paths as Record<string, Record<string, { description?: string }>>)[draftsPath];
    expect(
      Object.keys(item ?? {})
        .filter((k) => k !== 'parameters')
        .sort(),
    ).toEqual(['get', 'post']);
    expect(item?.post?.description).toMatch(/never launches anything/);
  });
});
