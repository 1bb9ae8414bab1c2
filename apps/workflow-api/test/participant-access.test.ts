import { randomBytes } from 'node:crypto';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

/**
 * A signed-in participant (the control web app) calls the Workflow API with the hub's participant JWT: any
 * member reads the project's contracts, artifact schemas and invocations; owner, admin and member write contracts
 * and invocations, owner and admin artifact schemas (registration and deprecation count as destructive);
 * a viewer's write is 403 `role_forbidden`; another workspace is 403 (`{workspaceId}`) or 404 (its project).
 * Delivery subscriptions with the participant token are `participant-deliveries.test.ts` (decision 90).
 */
let s: WorkflowTestStack;
let viewerToken: string;
let memberToken: string;

/** A new account added to the workspace with `role`, signed in. */
async function signedInMember(role: 'viewer' | 'member'): Promise<string> {
  const email = `${role}-${randomBytes(3).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const added = await call(s.hubUrl, 'POST', `/api/v1/workspaces/${s.workspace.slug}/members`, s.adminToken, {
    email,
    role,
    password,
  });
  expect(added.status).toBe(201);
  const login = await fetch(`${s.hubUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return ((await login.json()) as { data: { token: string } }).data.token;
}

beforeAll(async () => {
  s = await startWorkflowTestStack();
  viewerToken = await signedInMember('viewer');
  memberToken = await signedInMember('member');
}, 60_000);
afterAll(() => s.close());

async function call(base: string, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { code?: string; data?: unknown };
  return { status: res.status, code: json.code, data: json.data as Record<string, unknown> };
}

const wf = (method: string, path: string, token: string, body?: unknown) =>
  call(s.url, method, path, token, body);

const contractBody = (name: string) => ({
  name,
  classifier: { intentContains: [name] },
  template: {
    key: `tpl-${name}`,
    version: '1.0.0',
    required_capabilities: ['report'],
    artifact_schema: { name: 'report', version: '1.0.0' },
    guardrails: { human_approval_required: false },
  },
});

describe('participants on the Workflow API', () => {
  test('an owner registers a schema, creates a contract, resolves, invokes and cancels with the participant token', async () => {
    const schemas = `/api/v1/workspaces/${s.workspace.id}/artifact-schemas`;
    const registered = await wf('POST', schemas, s.adminToken, {
      project_id: s.project.id,
      name: 'report',
      version: '1.0.0',
      json_schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
    });
    expect(registered.status).toBe(201);
    expect((await wf('GET', `${schemas}?project_id=${s.project.id}`, s.adminToken)).status).toBe(200);

    const contracts = `/api/v1/projects/${s.project.id}/workflow/contracts`;
    const created = await wf('POST', contracts, s.adminToken, contractBody('owner-report'));
    expect(created.status).toBe(201);
    const resolved = await wf(
      'POST',
      `/api/v1/projects/${s.project.id}/workflow/resolve-intent`,
      s.adminToken,
      {
        intent: 'an owner-report please',
      },
    );
    expect(resolved).toMatchObject({ status: 200, data: { matched: true } });

    const res = await fetch(`${s.url}/api/v1/projects/${s.project.id}/workflow/invocations`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${s.adminToken}`,
        'content-type': 'application/json',
        'idempotency-key': `owner-${randomBytes(4).toString('hex')}`,
      },
      body: JSON.stringify({ intent: 'an owner-report please' }),
    });
    expect(res.status).toBe(201);
    const invocationId = ((await res.json()) as { data: { invocation_id: string } }).data.invocation_id;
    const cancelled = await wf(
      'POST',
      `/api/v1/projects/${s.project.id}/workflow/invocations/${invocationId}/cancel`,
      s.adminToken,
      { reason: 'not needed' },
    );
    expect(cancelled).toMatchObject({ status: 200, data: { state: 'cancelled' } });
    const audit = await s.database.prisma.auditEvent.findMany({
      where: { targetId: invocationId, action: 'invocation.cancelled' },
    });
    expect(audit[0]).toMatchObject({ actorKind: 'participant' });
  });

  test('a viewer reads but every write is 403 role_forbidden', async () => {
    const contracts = `/api/v1/projects/${s.project.id}/workflow/contracts`;
    expect((await wf('GET', contracts, viewerToken)).status).toBe(200);
    expect(
      (await wf('GET', `/api/v1/workspaces/${s.workspace.id}/artifact-schemas`, viewerToken)).status,
    ).toBe(200);
    expect(
      (await wf('GET', `/api/v1/projects/${s.project.id}/workflow/invocations`, viewerToken)).status,
    ).toBe(200);
    expect(await wf('POST', contracts, viewerToken, contractBody('viewer-report'))).toMatchObject({
      status: 403,
      code: 'role_forbidden',
    });
    expect(
      await wf('POST', `/api/v1/workspaces/${s.workspace.id}/artifact-schemas`, viewerToken, {
        project_id: s.project.id,
        name: 'viewer-schema',
        version: '1',
        json_schema: { type: 'object' },
      }),
    ).toMatchObject({ status: 403, code: 'role_forbidden' });
  });

  test('a member writes contracts but not artifact schemas (destructive: owners and admins)', async () => {
    const contracts = `/api/v1/projects/${s.project.id}/workflow/contracts`;
    expect((await wf('POST', contracts, memberToken, contractBody('member-report'))).status).toBe(201);
    expect(
      await wf('POST', `/api/v1/workspaces/${s.workspace.id}/artifact-schemas`, memberToken, {
        project_id: s.project.id,
        name: 'member-schema',
        version: '1',
        json_schema: { type: 'object' },
      }),
    ).toMatchObject({ status: 403, code: 'role_forbidden' });
  });

  test('another workspace is 403 by id and 404 by project', async () => {
    expect(
      await wf('GET', `/api/v1/workspaces/${s.otherProject.workspaceId}/artifact-schemas`, s.adminToken),
    ).toMatchObject({ status: 403, code: 'workspace_forbidden' });
    expect(
      await wf('GET', `/api/v1/projects/${s.otherProject.id}/workflow/contracts`, s.adminToken),
    ).toMatchObject({ status: 404, code: 'project_not_found' });
    expect(
      await wf('GET', `/api/v1/projects/${s.otherProject.id}/workflow/delivery-subscriptions`, s.adminToken),
    ).toMatchObject({ status: 404, code: 'project_not_found' });
  });

  test('publishing an artifact stays with agents and keys', async () => {
    expect(
      await wf(
        'POST',
        `/api/v1/projects/${s.project.id}/workflow/invocations/inv_missing/artifact`,
        s.adminToken,
        { payload: {} },
      ),
    ).toMatchObject({ status: 403, code: 'actor_not_allowed' });
  });
});
