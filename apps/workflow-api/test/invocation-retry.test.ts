import { randomBytes } from 'node:crypto';
import { eventually } from '@svc/testing';
import type { WorkflowApi } from '@svc/contracts';
import { ConflictError, Workflow } from '@svc/sdk';
import { newProject, seedContract, seedSchema } from './support/invocations-fixtures';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

type Invocation = WorkflowApi.components['schemas']['InvocationsInvocation'];
interface Reply {
  data: Invocation;
  code?: string;
  state?: string;
}

let s: WorkflowTestStack;
let runKey: string;
let readKey: string;
let project: { id: string; code: string };

beforeAll(async () => {
  s = await startWorkflowTestStack();
  runKey = await s.key(['workflows:run']);
  readKey = await s.key(['workflows:read']);
  project = await newProject(s);
  await seedContract(s, project.id);
  await seedSchema(s, project.id);
}, 60_000);

afterAll(async () => {
  await s?.close();
});

const newKey = () => `key-${randomBytes(8).toString('hex')}`;

async function call(
  method: string,
  path: string,
  options: { key?: string | null; idempotencyKey?: string; body?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: Reply }> {
  const apiKey = options.key === undefined ? runKey : options.key;
  const res = await fetch(`${s.url}/api/v1/projects/${path}`, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(apiKey ? { 'x-api-key': apiKey } : {}),
      ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Reply };
}

const invoke = (projectId: string, intent: string) =>
  call('POST', `${projectId}/workflow/invocations`, { idempotencyKey: newKey(), body: { intent } });
const retry = (projectId: string, invocationId: string, idempotencyKey?: string, key?: string) =>
  call('POST', `${projectId}/workflow/invocations/${invocationId}/retry`, {
    ...(idempotencyKey ? { idempotencyKey } : {}),
    ...(key ? { key } : {}),
  });

describe('POST /workflow/invocations/{id}/retry', () => {
  test('when the invocation has not ended, then 409 invocation_not_retryable with its state, and nothing is created', async () => {
    const created = await invoke(project.id, 'Weekly report for retry refusal');
    expect(created.status).toBe(201);
    const before = await s.database.prisma.invocation.count({ where: { projectId: project.id } });
    const res = await retry(project.id, created.body.data.invocation_id, newKey());
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.code).toBe('invocation_not_retryable');
    expect(res.body.state).toBe('received');
    expect(await s.database.prisma.invocation.count({ where: { projectId: project.id } })).toBe(before);
  });

  test('when a cancelled invocation is retried, then a new received invocation of the same request names it, both ways, the key replays and the retry is audited', async () => {
    const intent = '  Weekly REPORT, retried  ';
    const created = await invoke(project.id, intent);
    const original = created.body.data;
    const cancelled = await call(
      'POST',
      `${project.id}/workflow/invocations/${original.invocation_id}/cancel`,
      {
        body: { reason: 'wrong week' },
      },
    );
    expect(cancelled.body.data.state).toBe('cancelled');

    const missingKey = await retry(project.id, original.invocation_id);
    expect(missingKey.status).toBe(400);
    expect(missingKey.body.code).toBe('idempotency_key_required');

    const key = newKey();
    const first = await retry(project.id, original.invocation_id, key);
    expect(first.status).toBe(201);
    const copy = first.body.data;
    expect(copy.invocation_id).not.toBe(original.invocation_id);
    expect(copy).toMatchObject({
      state: 'received',
      intent,
      intent_normalized: original.intent_normalized,
      retry_of: original.invocation_id,
      retried_as: [],
      route: { matched: true, template_key: original.route.template_key },
    });

    const again = await retry(project.id, original.invocation_id, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.invocation_id).toBe(copy.invocation_id);

    const read = await call('GET', `${project.id}/workflow/invocations/${original.invocation_id}`, {
      key: readKey,
    });
    expect(read.body.data.retried_as).toEqual([copy.invocation_id]);
    expect(read.body.data.retry_of).toBeNull();

    const audited = await s.database.prisma.auditEvent.findMany({
      where: { targetId: original.invocation_id, action: 'invocation.retried' },
    });
    expect(audited).toHaveLength(1);
    expect(audited[0]!.data).toMatchObject({ retried_as: copy.invocation_id, state: 'cancelled' });

    // The same key for another original is another request.
    const other = (await invoke(project.id, 'Another report to retry')).body.data;
    await call('POST', `${project.id}/workflow/invocations/${other.invocation_id}/cancel`, { body: {} });
    const reused = await retry(project.id, other.invocation_id, key);
    expect(reused.status).toBe(409);
    expect(reused.body.code).toBe('idempotency_conflict');
  });

  test('when a key can only read, then 403; an unknown invocation is 404', async () => {
    const created = (await invoke(project.id, 'Report to retry with a read key')).body.data;
    const denied = await retry(project.id, created.invocation_id, newKey(), readKey);
    expect(denied.status).toBe(403);
    const unknown = await retry(project.id, 'inv_doesnotexist', newKey());
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('invocation_not_found');
  });

  test('the SDK retries with a generated key and a completed-state refusal is a ConflictError', async () => {
    const workflow = new Workflow({ baseUrl: s.url, apiKey: runKey, projectId: project.id, maxRetries: 0 });
    const { invocation } = await workflow.invocations.create({ intent: 'Report retried by the SDK' });
    await expect(workflow.invocations.retry(invocation.invocation_id)).rejects.toBeInstanceOf(ConflictError);
    await workflow.invocations.cancel(invocation.invocation_id);
    const retried = await workflow.invocations.retry(invocation.invocation_id);
    expect(retried.replayed).toBe(false);
    expect(retried.invocation.retry_of).toBe(invocation.invocation_id);
  });
});

describe('search', () => {
  test('q finds an invocation by its id or by words of its intent, with the other filters', async () => {
    const word = `zebra${randomBytes(3).toString('hex')}`;
    const a = (await invoke(project.id, `Quarterly ${word.toUpperCase()} summary`)).body.data;
    const b = (await invoke(project.id, 'Something else entirely')).body.data;
    const list = async (q: string) => {
      const res = await fetch(
        `${s.url}/api/v1/projects/${project.id}/workflow/invocations?q=${encodeURIComponent(q)}`,
        { headers: { 'x-api-key': readKey } },
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: Invocation[] }).data.map((i) => i.invocation_id);
    };
    expect(await list(word)).toEqual([a.invocation_id]);
    expect(await list(b.invocation_id)).toEqual([b.invocation_id]);
    expect(await list(`nothing-${word}`)).toEqual([]);
  });
});

describe('archived projects', () => {
  test('when the project is archived, then invoke and retry are 409 project_archived, the hub hides it from its list, and unarchiving lets invocations in again', async () => {
    const fresh = await newProject(s);
    await seedContract(s, fresh.id);
    const hubCall = async (method: 'POST' | 'PATCH' | 'GET', path: string, body?: unknown) => {
      const res = await fetch(`${s.hubUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${s.adminToken}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as { data: unknown; code?: string } };
    };
    const renamed = await hubCall('PATCH', `/api/v1/projects/${fresh.id}`, { name: 'Development' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Development', code: fresh.code, archived_at: null });

    const earlier = (await invoke(fresh.id, 'Report from before the archive')).body.data;
    await call('POST', `${fresh.id}/workflow/invocations/${earlier.invocation_id}/cancel`, { body: {} });

    const archived = await hubCall('POST', `/api/v1/projects/${fresh.id}/archive`);
    expect(archived.status).toBe(200);
    expect((archived.body.data as { archived_at: string | null }).archived_at).toEqual(expect.any(String));
    const twice = await hubCall('POST', `/api/v1/projects/${fresh.id}/archive`);
    expect((twice.body.data as { archived_at: string }).archived_at).toBe(
      (archived.body.data as { archived_at: string }).archived_at,
    );

    const ids = async (query: string) =>
      (
        (await hubCall('GET', `/api/v1/workspaces/${s.workspace.id}/projects${query}`)).body.data as {
          id: string;
        }[]
      ).map((p) => p.id);
    expect(await ids('')).not.toContain(fresh.id);
    expect(await ids('?include_archived=true')).toContain(fresh.id);

    // Within the project record's cache time (10 s) every replica refuses new invocations, retries too (one
    // key throughout: a retry made while the record was still cached is replayed, not repeated).
    const retryKey = newKey();
    const refusedRetry = await eventually(
      async () => {
        const res = await retry(fresh.id, earlier.invocation_id, retryKey);
        return res.status === 409 ? res : null;
      },
      30_000,
      'a retry refused in the archived project',
      { intervalMs: 500 },
    );
    expect(refusedRetry.body.code).toBe('project_archived');
    const refused = await invoke(fresh.id, 'Report in an archived project');
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('project_archived');
    // What it holds stays readable.
    const listed = await call('GET', `${fresh.id}/workflow/invocations`, { key: readKey });
    expect(listed.status).toBe(200);

    const unarchived = await hubCall('POST', `/api/v1/projects/${fresh.id}/unarchive`);
    expect((unarchived.body.data as { archived_at: string | null }).archived_at).toBeNull();
    // Within the project record's cache time (10 s) every replica takes invocations again.
    const accepted = await eventually(
      async () => {
        const res = await invoke(fresh.id, 'Report after unarchiving');
        return res.status === 201 ? res.body.data : null;
      },
      30_000,
      'an invocation accepted after unarchiving',
      { intervalMs: 500 },
    );
    expect(accepted.state).toBe('received');

    const retries = await s.database.prisma.invocation.count({ where: { retryOf: earlier.invocation_id } });
    expect(retries).toBeLessThanOrEqual(1);
    expect(await s.database.prisma.invocation.count({ where: { projectId: fresh.id } })).toBe(2 + retries);
  }, 60_000);
});
