import { randomBytes } from 'node:crypto';
import { eventually } from '@svc/testing';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

/**
 * Revocations and membership changes made on the hub (its build, as a process) reach the Workflow API within a
 * second through the hub's credential notices on the real Redis, although the Workflow API caches introspection
 * answers for 30 s and memberships for 10 s.
 */
let s: WorkflowTestStack;
beforeAll(async () => {
  s = await startWorkflowTestStack();
}, 60_000);
afterAll(() => s.close());

async function hubCall<T>(method: string, path: string, body?: unknown, token = s.adminToken) {
  const res = await fetch(`${s.hubUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, data: (text ? (JSON.parse(text) as { data: T }).data : undefined) as T };
}

async function workflowStatus(path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${s.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { code?: string };
  return { status: res.status, code: json.code };
}

describe('credential notices', () => {
  test('when an API key is revoked on the hub, then the Workflow API refuses it within 1 s although its answer is cached', async () => {
    const ws = `/api/v1/workspaces/${s.workspace.slug}`;
    const created = await hubCall<{ id: string; key: string }>('POST', `${ws}/api-keys`, {
      name: `revocable-${randomBytes(3).toString('hex')}`,
      scopes: ['workflow-contracts:read'],
    });
    expect(created.status).toBe(201);
    const contracts = `/api/v1/projects/${s.project.id}/workflow/contracts`;
    const key = { 'x-api-key': created.data.key };
    // Read twice: the second answer comes from the 30 s introspection cache.
    expect((await workflowStatus(contracts, key)).status).toBe(200);
    expect((await workflowStatus(contracts, key)).status).toBe(200);

    const revoked = await hubCall('DELETE', `${ws}/api-keys/${created.data.id}`);
    expect(revoked.status).toBe(200);
    const started = Date.now();
    await eventually(
      async () => (await workflowStatus(contracts, key)).status === 401,
      1_000,
      'the revoked key refused',
      { intervalMs: 25 },
    );
    const took = Date.now() - started;
    expect(took).toBeLessThan(1_000);
    expect(await workflowStatus(contracts, key)).toEqual({ status: 401, code: 'credential_invalid' });
  });

  test('when a member loses a role or leaves, then the Workflow API sees it within 1 s although memberships are cached', async () => {
    const ws = `/api/v1/workspaces/${s.workspace.slug}`;
    const email = `approver-${randomBytes(3).toString('hex')}@example.test`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const added = await hubCall<{ participant: { id: string } }>('POST', `${ws}/members`, {
      email,
      role: 'admin',
      password,
    });
    expect(added.status).toBe(201);
    const participantId = added.data.participant.id;
    const session = await fetch(`${s.hubUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const token = ((await session.json()) as { data: { token: string } }).data.token;
    const approval = `/api/v1/projects/${s.project.id}/workflow/invocations/inv_unknown0000/approval`;
    const decide = () =>
      workflowStatus(approval, { authorization: `Bearer ${token}` }, { decision: 'approve' });

    // An admin passes the role check and reaches the (missing) invocation; the membership is now cached.
    expect(await decide()).toEqual({ status: 404, code: 'invocation_not_found' });
    expect(await decide()).toEqual({ status: 404, code: 'invocation_not_found' });

    expect((await hubCall('PATCH', `${ws}/members/${participantId}`, { role: 'viewer' })).status).toBe(200);
    await eventually(
      async () => (await decide()).status === 403,
      1_000,
      'the demoted member refused approval',
      { intervalMs: 25 },
    );
    expect((await decide()).status).toBe(403);

    expect((await hubCall('DELETE', `${ws}/members/${participantId}`)).status).toBe(204);
    await eventually(
      async () => (await decide()).code === 'project_not_found',
      1_000,
      'the removed member refused',
      { intervalMs: 25 },
    );
  });
});
