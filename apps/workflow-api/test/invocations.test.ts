import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson, invocationFingerprint } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import { IdempotencyError, Workflow } from '@svc/sdk';
import { fuzzBodies, newProject, seedContract, seedSchema } from './support/invocations-fixtures';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

let s: WorkflowTestStack;
let runKey: string;
let readKey: string;
let project: { id: string; code: string };
let contractId: string;

beforeAll(async () => {
  s = await startWorkflowTestStack();
  runKey = await s.key(['workflows:run']);
  readKey = await s.key(['workflows:read']);
  project = await newProject(s);
  contractId = (await seedContract(s, project.id)).id;
  await seedSchema(s, project.id);
}, 60_000);

afterAll(async () => {
  await s?.close();
});

const newKey = () => `key-${randomBytes(8).toString('hex')}`;
/** The SDK with this key, in the test project, without client retries. */
const workflowWith = (apiKey: string) =>
  new Workflow({ baseUrl: s.url, apiKey, projectId: project.id, maxRetries: 0 });

function post(
  projectId: string,
  body: unknown,
  headers: Record<string, string> = {},
  apiKey: string | null = runKey,
) {
  return fetch(`${s.url}/api/v1/projects/${projectId}/workflow/invocations`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(apiKey ? { 'x-api-key': apiKey } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

type Invocation = WorkflowApi.components['schemas']['InvocationsInvocation'];
/** A success body or a problem, read loosely. */
interface Reply {
  data: Invocation;
  code?: string;
  detail?: string;
  invocation_id?: string;
}

async function json(res: Response): Promise<Reply> {
  return (await res.json()) as Reply;
}

describe('POST /workflow/invocations', () => {
  test('when the Idempotency-Key header is missing, then 400 idempotency_key_required and nothing is stored', async () => {
    const before = await s.database.prisma.invocation.count();
    const res = await post(project.id, { intent: 'weekly report' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await json(res)).code).toBe('idempotency_key_required');
    expect(await s.database.prisma.invocation.count()).toBe(before);
  });

  test('when the key or the correlation id is not 1–255 printable ASCII, then 400', async () => {
    for (const key of ['x'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const res = await fetch(`${s.url}/api/v1/projects/${project.id}/workflow/invocations`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': runKey,
          'idempotency-key': Buffer.from(key, 'latin1').toString('latin1'),
        },
        body: JSON.stringify({ intent: 'weekly report' }),
      }).catch(() => null);
      // fetch itself refuses some header values; those never reach the server.
      if (res) {
        expect(res.status).toBe(400);
        expect((await json(res)).code).toBe('idempotency_key_invalid');
      }
    }
    const res = await post(
      project.id,
      { intent: 'weekly report' },
      { 'Idempotency-Key': newKey(), 'X-Correlation-ID': 'y'.repeat(256) },
    );
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe('correlation_id_invalid');
  });

  test('when a new key is sent, then 201 with a received invocation whose route is persisted, the template marked used and the call audited', async () => {
    const key = newKey();
    const res = await post(
      project.id,
      { intent: '  Please send the  WEEKLY Report ', metadata: { source: 'crm' } },
      { 'Idempotency-Key': key, 'X-Correlation-ID': 'corr-1' },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const { data } = await json(res);
    expect(data).toEqual({
      invocation_id: expect.stringMatching(/^inv_/),
      project_id: project.id,
      intent: '  Please send the  WEEKLY Report ',
      intent_normalized: 'please send the weekly report',
      failure: null,
      cancellation: null,
      retry_of: null,
      retried_as: [],
      state: 'received',
      attention: 'none',
      route: {
        matched: true,
        selection: 'resolved',
        contract_id: contractId,
        template_key: 'report-flow',
        template_version: '1.0.0',
        winner_reason: expect.any(String),
      },
      correlation_id: 'corr-1',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      stages: [],
      current_stage: null,
      latest_handoff: null,
      artifact: null,
      run_id: null,
      attention_reason: null,
      blockers: [],
      approval: null,
    });
    const row = await s.database.prisma.invocation.findUniqueOrThrow({ where: { id: data.invocation_id } });
    expect(row).toMatchObject({
      idempotencyKey: key,
      contractId,
      templateKey: 'report-flow',
      templateVersion: '1.0.0',
      state: 'received',
      attention: 'none',
      createdByKind: 'api_key',
      request: { intent: 'please send the weekly report', metadata: { source: 'crm' } },
      intent: '  Please send the  WEEKLY Report ',
    });
    expect(row.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const days = (row.keyExpiresAt.getTime() - row.createdAt.getTime()) / 86_400_000;
    expect(days).toBe(30);
    const template = await s.database.prisma.workflowTemplate.findFirstOrThrow({
      where: { projectId: project.id, key: 'report-flow', version: '1.0.0' },
    });
    expect(template.firstUsedAt).not.toBeNull();
    const audit = await s.database.prisma.auditEvent.findMany({
      where: { action: 'invocation.created', targetId: data.invocation_id },
    });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      workspaceId: s.workspace.id,
      projectId: project.id,
      actorKind: 'api_key',
      targetType: 'invocation',
    });
    expect(JSON.stringify(audit[0])).not.toContain(runKey);
  });

  test('when the same key comes with the same normalized request, then 200 with the original invocation and Idempotent-Replayed: true', async () => {
    const key = newKey();
    const first = await post(
      project.id,
      { intent: 'Weekly report', required_capabilities: ['b', 'a'] },
      { 'Idempotency-Key': key },
    );
    expect(first.status).toBe(201);
    const original = (await json(first)).data;
    // Case, spacing, capability order and duplicates do not change the normalized request.
    for (const body of [
      { intent: 'Weekly report', required_capabilities: ['b', 'a'] },
      { intent: '  WEEKLY   REPORT ', required_capabilities: ['a', 'b', 'a'] },
    ]) {
      const again = await post(project.id, body, { 'Idempotency-Key': key, 'X-Correlation-ID': 'other' });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await json(again)).data).toEqual(original);
    }
    // The replay returns the intent first sent, not the retry's spelling.
    expect(original.intent).toBe('Weekly report');
    expect(await s.database.prisma.invocation.count({ where: { idempotencyKey: key } })).toBe(1);
  });

  test('when an intent has capitals, punctuation, spacing and non-ASCII text, then it is read back exactly as sent and matched in normalized form', async () => {
    const intent = 'Weekly REPORT for INC-4711: «Ärger» — déjà vu!\tTabs  and  ＦＵＬＬＷＩＤＴＨ?';
    const res = await post(project.id, { intent }, { 'Idempotency-Key': newKey() });
    expect(res.status).toBe(201);
    const created = (await json(res)).data;
    expect(created.intent).toBe(intent);
    expect(created.intent_normalized).toBe(
      'weekly report for inc-4711: «ärger» — déjà vu! tabs and fullwidth?',
    );
    // Matching used the normalized form: 'weekly report' is the classifier phrase.
    expect(created.route).toMatchObject({ matched: true, contract_id: contractId });
    const read = await workflowWith(readKey).invocations.get(created.invocation_id);
    expect(read.intent).toBe(intent);
    const row = await s.database.prisma.invocation.findUniqueOrThrow({
      where: { id: created.invocation_id },
    });
    expect(row.intent).toBe(intent);
    expect(row.fingerprint).toBe(invocationFingerprint({ intent }));
    expect(row.fingerprint).toBe(invocationFingerprint({ intent: intent.toLowerCase() }));
  });

  test('when the same key comes with changed content, then 409 idempotency_conflict naming the original invocation', async () => {
    const key = newKey();
    const first = await post(project.id, { intent: 'weekly report' }, { 'Idempotency-Key': key });
    const original = (await json(first)).data;
    for (const changed of [
      { intent: 'monthly report' },
      { intent: 'weekly report', required_capabilities: ['code'] },
      { intent: 'weekly report', metadata: { source: 'x' } },
      { intent: 'weekly report', workflow_contract_id: contractId },
    ]) {
      const res = await post(project.id, changed, { 'Idempotency-Key': key });
      expect(res.status).toBe(409);
      const problem = await json(res);
      expect(problem).toMatchObject({ code: 'idempotency_conflict', invocation_id: original.invocation_id });
      expect(problem.detail).toMatch(/restore the original request.*new key/i);
    }
  });

  test('when 200 identical requests race on one key, then exactly one invocation exists and every answer names it', async () => {
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        post(project.id, { intent: 'weekly report race' }, { 'Idempotency-Key': key }).then(async (r) => ({
          status: r.status,
          replayed: r.headers.get('idempotent-replayed'),
          id: (await json(r)).data?.invocation_id as string,
        })),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200 && a.replayed === 'true')).toHaveLength(199);
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    const rows = await s.database.prisma.invocation.findMany({ where: { idempotencyKey: key } });
    expect(rows).toHaveLength(1);
    expect(
      await s.database.prisma.auditEvent.count({
        where: { action: 'invocation.created', targetId: rows[0]?.id },
      }),
    ).toBe(1);
  });

  test('when 200 different requests race on one key, then one succeeds and every other is 409', async () => {
    const key = newKey();
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        post(project.id, { intent: `weekly report ${i}` }, { 'Idempotency-Key': key }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((st) => st === 201)).toHaveLength(1);
    expect(statuses.filter((st) => st === 409)).toHaveLength(199);
    expect(await s.database.prisma.invocation.count({ where: { idempotencyKey: key } })).toBe(1);
  });

  test('when a key is past its 30-day retention, then it starts a new invocation and the old one is kept', async () => {
    const key = newKey();
    const old = (await json(await post(project.id, { intent: 'weekly report' }, { 'Idempotency-Key': key })))
      .data;
    await s.database.prisma.invocation.update({
      where: { id: old.invocation_id },
      data: { keyExpiresAt: new Date(Date.now() - 1000) },
    });
    const res = await post(project.id, { intent: 'a different weekly report' }, { 'Idempotency-Key': key });
    expect(res.status).toBe(201);
    const fresh = (await json(res)).data;
    expect(fresh.invocation_id).not.toBe(old.invocation_id);
    const kept = await s.database.prisma.invocation.findUniqueOrThrow({ where: { id: old.invocation_id } });
    expect(kept.idempotencyKey).not.toBe(key);
    expect(kept.idempotencyKey.startsWith(key)).toBe(true);
  });

  test('when a contract is pinned, then it is the route; an unknown or inactive one is 400 workflow_contract_not_found', async () => {
    const other = await seedContract(s, project.id, {
      name: 'Other',
      priority: 1,
      intentContains: ['never said'],
      templateKey: 'other-flow',
    });
    const pinned = await post(
      project.id,
      { intent: 'weekly report', workflow_contract_id: other.id },
      { 'Idempotency-Key': newKey() },
    );
    expect(pinned.status).toBe(201);
    expect((await json(pinned)).data.route).toMatchObject({
      matched: true,
      selection: 'pinned_contract',
      contract_id: other.id,
      template_key: 'other-flow',
    });
    const inactive = await seedContract(s, project.id, { name: 'Retired', isActive: false });
    for (const id of ['wfc_doesnotexist', inactive.id]) {
      const res = await post(
        project.id,
        { intent: 'x', workflow_contract_id: id },
        { 'Idempotency-Key': newKey() },
      );
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('workflow_contract_not_found');
    }
    const mismatch = await post(
      project.id,
      { intent: 'x', workflow_contract_id: other.id, workflow_template_key: 'report-flow' },
      { 'Idempotency-Key': newKey() },
    );
    expect((await json(mismatch)).code).toBe('workflow_template_mismatch');
  });

  test('when a template is pinned, then the route uses the contract of that template; unknown ones and a version without a key are 400', async () => {
    const res = await post(
      project.id,
      {
        intent: 'nothing matches this',
        workflow_template_key: 'report-flow',
        workflow_template_version: '1.0.0',
      },
      { 'Idempotency-Key': newKey() },
    );
    expect(res.status).toBe(201);
    expect((await json(res)).data.route).toMatchObject({
      selection: 'pinned_template',
      contract_id: contractId,
      template_key: 'report-flow',
      template_version: '1.0.0',
    });
    const unknown = await post(
      project.id,
      { intent: 'x', workflow_template_key: 'report-flow', workflow_template_version: '9.9.9' },
      { 'Idempotency-Key': newKey() },
    );
    expect((await json(unknown)).code).toBe('workflow_template_not_found');
    const versionOnly = await post(
      project.id,
      { intent: 'x', workflow_template_version: '1.0.0' },
      { 'Idempotency-Key': newKey() },
    );
    expect(versionOnly.status).toBe(400);
    expect((await json(versionOnly)).code).toBe('workflow_template_key_required');
  });

  test('when the intent is only whitespace, then invoke, preflight and resolve answer 400 intent_blank and nothing is stored', async () => {
    const before = await s.database.prisma.invocation.count();
    const resolveKey = await s.key(['workflow-contracts:read']);
    for (const intent of [' ', '   \t\n ', '\u00a0\u2003']) {
      const created = await post(project.id, { intent }, { 'idempotency-key': newKey() });
      expect(created.status).toBe(400);
      expect(created.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = (await created.json()) as { code: string; detail: string; errors: unknown[] };
      expect(problem.code).toBe('intent_blank');
      expect(problem.detail).toMatch(/blank/);
      expect(problem.errors).toEqual([{ location: 'body/intent', message: expect.any(String) }]);
      for (const path of ['preflight', 'resolve-intent']) {
        const res = await fetch(`${s.url}/api/v1/projects/${project.id}/workflow/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': resolveKey },
          body: JSON.stringify({ intent }),
        });
        expect([path, res.status, ((await res.json()) as { code: string }).code]).toEqual([
          path,
          400,
          'intent_blank',
        ]);
      }
    }
    expect(await s.database.prisma.invocation.count()).toBe(before);
  });

  test('when no contract matches, then the invocation is stored with an unmatched route', async () => {
    const res = await post(project.id, { intent: 'bake a cake' }, { 'Idempotency-Key': newKey() });
    expect(res.status).toBe(201);
    expect((await json(res)).data.route).toEqual({
      matched: false,
      selection: 'resolved',
      contract_id: null,
      template_key: null,
      template_version: null,
      winner_reason: null,
    });
  });

  test('when the key lacks workflows:run, there is no key, or the project is another workspace\u2019s, then 403, 401 and 404', async () => {
    const body = { intent: 'weekly report' };
    const noScope = await post(project.id, body, { 'Idempotency-Key': newKey() }, readKey);
    expect(noScope.status).toBe(403);
    expect((await json(noScope)).code).toBe('scope_missing');
    const noKey = await post(project.id, body, { 'Idempotency-Key': newKey() }, null);
    expect(noKey.status).toBe(401);
    const rival = await s.otherProject.key(['workflows:run']);
    const other = await post(project.id, body, { 'Idempotency-Key': newKey() }, rival);
    expect(other.status).toBe(404);
    expect((await json(other)).code).toBe('project_not_found');
  });

  test('when ~100 malformed or fuzzed bodies are posted, then each is a 4xx problem (never a 5xx)', async () => {
    const bodies: unknown[] = [
      ...fuzzBodies(100),
      '{not json',
      '',
      '[]',
      'null',
      '"intent"',
      { intent: '' },
      { intent: 'x'.repeat(4001) },
      { intent: 'ok', required_capabilities: 'code' },
      { intent: 'ok', metadata: { a: 1 } },
    ];
    const statuses: number[] = [];
    for (const body of bodies) {
      const res = await post(project.id, body, { 'Idempotency-Key': newKey() });
      statuses.push(res.status);
      if (res.status >= 500)
        throw new Error(`5xx for ${JSON.stringify(body)}: ${await res.text()} ${s.logs.slice(-3).join('')}`);
      if (res.status >= 400) expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
    expect(statuses.filter((st) => st >= 400 && st < 500).length).toBeGreaterThan(bodies.length * 0.7);
  });
});

describe('GET /workflow/invocations/{invocationId}', () => {
  let invocationId: string;
  beforeAll(async () => {
    const res = await post(
      project.id,
      { intent: 'weekly report' },
      { 'Idempotency-Key': newKey(), 'X-Correlation-ID': 'c-9' },
    );
    invocationId = (await json(res)).data.invocation_id;
  });

  test('when read with workflows:read, then the lifecycle view of the invocation', async () => {
    const res = await s
      .client(readKey)
      .GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
        params: { path: { projectId: project.id, invocationId } },
      });
    expect(res.response.status).toBe(200);
    expect(res.data?.data).toMatchObject({
      invocation_id: invocationId,
      state: 'received',
      attention: 'none',
      correlation_id: 'c-9',
      route: { matched: true, contract_id: contractId },
      stages: [],
      current_stage: null,
      latest_handoff: null,
      artifact: null,
    });
  });

  test('when the key lacks workflows:read, there is no key, or the project belongs to another workspace, then 403, 401, 404', async () => {
    const path = { projectId: project.id, invocationId };
    const noScope = await s
      .client(runKey)
      .GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
        params: { path },
      });
    expect(noScope.response.status).toBe(403);
    expect(noScope.error?.code).toBe('scope_missing');
    const noKey = await s.client().GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
      params: { path },
    });
    expect(noKey.response.status).toBe(401);
    const rival = s.client(await s.otherProject.key(['workflows:read']));
    const other = await rival.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
      params: { path },
    });
    expect(other.response.status).toBe(404);
    // Its own project does not reveal our invocation either.
    const own = await rival.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
      params: { path: { projectId: s.otherProject.id, invocationId } },
    });
    expect(own.response.status).toBe(404);
    expect(own.error?.code).toBe('invocation_not_found');
  });

  test('when the invocation does not exist or its id is malformed, then 404 and 400', async () => {
    const client = s.client(readKey);
    const missing = await client.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
      params: { path: { projectId: project.id, invocationId: 'inv_missing' } },
    });
    expect(missing.error?.code).toBe('invocation_not_found');
    const bad = await fetch(`${s.url}/api/v1/projects/${project.id}/workflow/invocations/not%20an%20id`, {
      headers: { 'x-api-key': readKey },
    });
    expect(bad.status).toBe(400);
  });
});

describe('the SDK against the server', () => {
  test('when an invocation is created twice with one key, then the second result is the original with replayed: true', async () => {
    const workflow = workflowWith(
      await s.key(['workflows:run', 'workflows:read', 'workflow-contracts:read']),
    );
    const idempotencyKey = newKey();
    const first = await workflow.invocations.create(
      { intent: 'weekly report' },
      { idempotencyKey, correlationId: 'sdk-1' },
    );
    expect(first.replayed).toBe(false);
    expect(first.invocation).toMatchObject({ state: 'received', correlation_id: 'sdk-1' });
    const second = await workflow.invocations.create({ intent: 'weekly report' }, { idempotencyKey });
    expect(second).toEqual({ invocation: first.invocation, replayed: true });

    const conflict = await workflow.invocations
      .create({ intent: 'something else' }, { idempotencyKey })
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(IdempotencyError);
    expect(conflict).toMatchObject({ status: 409, code: 'idempotency_conflict' });
    expect((conflict as IdempotencyError).problem?.invocation_id).toBe(first.invocation.invocation_id);

    expect(await workflow.invocations.get(first.invocation.invocation_id)).toEqual(first.invocation);
    const ready = await workflow.invocations.preflight({ intent: 'weekly report' });
    expect(ready).toMatchObject({ matched: true, route_ready: true });
  });
});

describe('the idempotency fingerprint', () => {
  test('when the SDK fingerprints a request, then it equals the fingerprint the server stored, byte for byte', async () => {
    const bodies: WorkflowApi.components['schemas']['InvocationsCreateRequest'][] = [
      { intent: 'weekly report' },
      { intent: '  Weekly\t\tREPORT \n for  Ｑ３ ' },
      { intent: 'Café résumé — naïve 🚀 weekly report', metadata: { sôurce: 'app ☃', route: '/r' } },
      { intent: 'weekly report', required_capabilities: ['write', 'analyze', 'write', 'Analyze'] },
      { intent: 'weekly report', required_capabilities: [] },
      { intent: 'weekly report', metadata: { b: '2', a: '1' }, workflow_contract_id: contractId },
      { intent: 'e\u0301 weekly report', required_capabilities: ['z', 'a'], metadata: {} },
    ];
    for (const body of bodies) {
      const res = await post(project.id, body, { 'idempotency-key': newKey() });
      expect(res.status).toBe(201);
      const { data } = await json(res);
      const stored = await s.database.prisma.invocation.findUniqueOrThrow({
        where: { id: data.invocation_id },
        select: { fingerprint: true, request: true },
      });
      const sdk = invocationFingerprint(body);
      expect([body, stored.fingerprint]).toEqual([body, sdk]);
      // The stored fingerprint is the hash of the stored (normalized) request's canonical JSON.
      expect(createHash('sha256').update(canonicalJson(stored.request)).digest('hex')).toBe(sdk);
    }
  });

  test('when two bodies normalize alike, then the SDK fingerprints agree and the server replays the first', async () => {
    const key = newKey();
    const first = { intent: 'Weekly  Report', required_capabilities: ['b', 'a', 'b'] };
    const second = { intent: 'weekly report', required_capabilities: ['a', 'b'] };
    expect(invocationFingerprint(first)).toBe(invocationFingerprint(second));
    expect((await post(project.id, first, { 'idempotency-key': key })).status).toBe(201);
    const replay = await post(project.id, second, { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });
});
