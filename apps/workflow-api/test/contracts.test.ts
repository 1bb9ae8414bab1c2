import { randomBytes } from 'node:crypto';
import { unwrap } from '@svc/contracts';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

let s: WorkflowTestStack;
let writer: string;
let reader: string;
beforeAll(async () => {
  s = await startWorkflowTestStack();
  writer = await s.key(['workflow-contracts:write', 'workflow-contracts:read']);
  reader = await s.key(['workflow-contracts:read']);
}, 60_000);
afterAll(() => s.close());

/** Parsed response JSON; the assertions check its shape. */
type Json = ReturnType<typeof JSON.parse>;

const base = (projectId: string) => `/api/v1/projects/${projectId}/workflow`;

async function call(
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: Json; type: string }> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    type: res.headers.get('content-type') ?? '',
  };
}

function template(key = `tpl-${randomBytes(4).toString('hex')}`, version = '1.0.0', extra: object = {}) {
  return {
    key,
    version,
    required_capabilities: ['code'],
    artifact_schema: { name: 'report', version: '1' },
    guardrails: { human_approval_required: false },
    ...extra,
  };
}

function contractBody(extra: object = {}) {
  return {
    name: `contract ${randomBytes(3).toString('hex')}`,
    priority: 1,
    classifier: { intentContains: ['deploy'], requiredCapabilities: [], metadata: {} },
    template: template(),
    ...extra,
  };
}

async function createProject(code: string): Promise<string> {
  const project = unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: s.workspace.slug } },
      body: { code, name: code },
    }),
  );
  return project.id;
}

async function create(projectId: string, body: object) {
  const res = await call('POST', `${base(projectId)}/contracts`, writer, body);
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function resolve(projectId: string, body: object, key = reader) {
  return call('POST', `${base(projectId)}/resolve-intent`, key, body);
}

async function countAllRows(): Promise<Record<string, number>> {
  const tables = await s.database.prisma.$queryRawUnsafe<{ table_name: string }[]>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const counts: Record<string, number> = {};
  for (const { table_name } of tables) {
    const [row] = await s.database.prisma.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM "${table_name}"`,
    );
    counts[table_name] = Number(row?.n ?? 0);
  }
  return counts;
}

describe('workflow contracts', () => {
  test('when a contract is created, then it is returned with contract_id, revision 1, stored template and an audit event', async () => {
    const body = contractBody({ priority: 7 });
    const res = await call('POST', `${base(s.project.id)}/contracts`, writer, body);
    expect(res.status).toBe(201);
    const c = res.body.data;
    expect(c.contract_id).toMatch(/^wfc_/);
    expect(c).toMatchObject({
      project_id: s.project.id,
      name: body.name,
      priority: 7,
      fallback: false,
      is_active: true,
      revision: 1,
      classifier: { intentContains: ['deploy'], requiredCapabilities: [], metadata: {} },
      template: { ...body.template, stages: [] },
    });
    const audit = await s.database.prisma.auditEvent.findMany({ where: { targetId: c.contract_id } });
    expect(audit.map((a) => a.action)).toEqual(['workflow_contract.created']);
    expect(audit[0]?.actorKind).toBe('api_key');
    const tpl = await s.database.prisma.workflowTemplate.findMany({ where: { key: body.template.key } });
    expect(tpl).toHaveLength(1);

    const got = await call('GET', `${base(s.project.id)}/contracts/${c.contract_id}`, reader);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(c);
  });

  test('when contracts are listed, then active ones are returned in creation order with pages, and retired ones only on request', async () => {
    const project = await createProject('LIST');
    const a = await create(project, contractBody());
    const b = await create(project, contractBody());
    const c = await create(project, contractBody());
    const retired = await call('PATCH', `${base(project)}/contracts/${b.contract_id}`, writer, {
      is_active: false,
    });
    expect(retired.status).toBe(200);
    expect(retired.body.data).toMatchObject({ is_active: false, revision: 2 });

    const list = await call('GET', `${base(project)}/contracts`, reader);
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: Json) => x.contract_id)).toEqual([a.contract_id, c.contract_id]);
    expect(list.body.next_cursor).toBeNull();

    const all = await call('GET', `${base(project)}/contracts?include_inactive=true`, reader);
    expect(all.body.data.map((x: Json) => x.contract_id)).toEqual([
      a.contract_id,
      b.contract_id,
      c.contract_id,
    ]);

    const page1 = await call('GET', `${base(project)}/contracts?include_inactive=true&limit=2`, reader);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.next_cursor).toBe(b.contract_id);
    const page2 = await call(
      'GET',
      `${base(project)}/contracts?include_inactive=true&limit=2&cursor=${page1.body.next_cursor}`,
      reader,
    );
    expect(page2.body.data.map((x: Json) => x.contract_id)).toEqual([c.contract_id]);
    expect(page2.body.next_cursor).toBeNull();

    const bad = await call('GET', `${base(project)}/contracts?limit=0`, reader);
    expect(bad.status).toBe(400);
  });

  test('when a contract is patched, then only sent fields change, revision grows, and each change is audited', async () => {
    const c = await create(s.project.id, contractBody());
    const path = `${base(s.project.id)}/contracts/${c.contract_id}`;
    const renamed = await call('PATCH', path, writer, { name: 'renamed', priority: 3 });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      name: 'renamed',
      priority: 3,
      revision: 2,
      classifier: c.classifier,
    });
    const same = await call('PATCH', path, writer, { name: 'renamed' });
    expect(same.body.data.revision).toBe(2);
    const empty = await call('PATCH', path, writer, {});
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('patch_empty');
    const retired = await call('PATCH', path, writer, { is_active: false });
    expect(retired.body.data).toMatchObject({ is_active: false, revision: 3 });
    const back = await call('PATCH', path, writer, { is_active: true });
    expect(back.body.data).toMatchObject({ is_active: true, revision: 4 });
    const audit = await s.database.prisma.auditEvent.findMany({
      where: { targetId: c.contract_id },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual([
      'workflow_contract.created',
      'workflow_contract.updated',
      'workflow_contract.retired',
      'workflow_contract.updated',
    ]);
    expect((audit[1]?.data as { fields: string[] }).fields).toEqual(['name', 'priority']);

    const missing = await call('PATCH', `${base(s.project.id)}/contracts/wfc_missing`, writer, { name: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('contract_not_found');
    const missingGet = await call('GET', `${base(s.project.id)}/contracts/wfc_missing`, reader);
    expect(missingGet.body.code).toBe('contract_not_found');
  });

  test('when the classifier is empty, then create and patch answer 400 classifier_empty; an explicit fallback is accepted', async () => {
    for (const classifier of [
      undefined,
      {},
      { intentContains: [], requiredCapabilities: [], metadata: {} },
    ]) {
      const res = await call('POST', `${base(s.project.id)}/contracts`, writer, contractBody({ classifier }));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('classifier_empty');
      expect(res.type).toMatch(/problem\+json/);
    }
    const blank = await call(
      'POST',
      `${base(s.project.id)}/contracts`,
      writer,
      contractBody({ classifier: { intentContains: ['  \t '] } }),
    );
    expect(blank.body.code).toBe('classifier_phrase_empty');
    const fallbackWithCriteria = await call(
      'POST',
      `${base(s.project.id)}/contracts`,
      writer,
      contractBody({ fallback: true }),
    );
    expect(fallbackWithCriteria.body.code).toBe('fallback_with_criteria');

    const fallback = await create(
      s.project.id,
      contractBody({ fallback: true, classifier: undefined, priority: -100 }),
    );
    expect(fallback).toMatchObject({
      fallback: true,
      classifier: { intentContains: [], requiredCapabilities: [], metadata: {} },
    });
    const c = await create(s.project.id, contractBody());
    const emptied = await call('PATCH', `${base(s.project.id)}/contracts/${c.contract_id}`, writer, {
      classifier: {},
    });
    expect(emptied.body.code).toBe('classifier_empty');
    await call('PATCH', `${base(s.project.id)}/contracts/${fallback.contract_id}`, writer, {
      is_active: false,
    });
  });

  test('when a template is incomplete or repeats a stage key, then it is refused; stages without keys default to one implicit stage', async () => {
    for (const drop of ['key', 'version', 'required_capabilities', 'artifact_schema', 'guardrails']) {
      const t: Record<string, unknown> = template();
      delete t[drop];
      const res = await call(
        'POST',
        `${base(s.project.id)}/contracts`,
        writer,
        contractBody({ template: t }),
      );
      expect(res.status).toBe(400);
    }
    const dup = await call(
      'POST',
      `${base(s.project.id)}/contracts`,
      writer,
      contractBody({
        template: template(undefined, '1', {
          stages: [
            { key: 'a', title: 'A', required_capabilities: [] },
            { key: 'a', title: 'B', required_capabilities: [] },
          ],
        }),
      }),
    );
    expect(dup.status).toBe(400);
    expect(dup.body.code).toBe('template_stage_duplicate');
  });

  test('when a template version was used by an invocation, then a different definition is 409 template_version_immutable; before that it is replaced, and the same one is reused', async () => {
    const key = `immut-${randomBytes(3).toString('hex')}`;
    const first = await create(s.project.id, contractBody({ template: template(key, '1.0.0') }));
    const changed = template(key, '1.0.0', { required_capabilities: ['code', 'review'] });
    const replaced = await call(
      'POST',
      `${base(s.project.id)}/contracts`,
      writer,
      contractBody({ template: changed }),
    );
    expect(replaced.status).toBe(201);
    const reread = await call('GET', `${base(s.project.id)}/contracts/${first.contract_id}`, reader);
    expect(reread.body.data.template.required_capabilities).toEqual(['code', 'review']);

    await s.database.prisma.workflowTemplate.updateMany({
      where: { projectId: s.project.id, key, version: '1.0.0' },
      data: { firstUsedAt: new Date() },
    });
    const same = await call(
      'POST',
      `${base(s.project.id)}/contracts`,
      writer,
      contractBody({ template: changed }),
    );
    expect(same.status).toBe(201);
    const refused = await call(
      'POST',
      `${base(s.project.id)}/contracts`,
      writer,
      contractBody({ template: template(key, '1.0.0') }),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('template_version_immutable');
    const patchRefused = await call('PATCH', `${base(s.project.id)}/contracts/${first.contract_id}`, writer, {
      template: template(key, '1.0.0', { guardrails: { human_approval_required: true } }),
    });
    expect(patchRefused.status).toBe(409);
    const newVersion = await call('PATCH', `${base(s.project.id)}/contracts/${first.contract_id}`, writer, {
      template: template(key, '1.1.0', { guardrails: { human_approval_required: true } }),
    });
    expect(newVersion.status).toBe(200);
    expect(newVersion.body.data.template).toMatchObject({
      version: '1.1.0',
      guardrails: { human_approval_required: true },
    });
    const rows = await s.database.prisma.workflowTemplate.findMany({
      where: { projectId: s.project.id, key },
    });
    expect(rows.map((r) => r.version).sort()).toEqual(['1.0.0', '1.1.0']);
  });
});

describe('resolve-intent', () => {
  test('when an intent matches, then the winner, its template with the implicit stage and a full explanation are returned', async () => {
    const project = await createProject('RES');
    const low = await create(project, contractBody({ name: 'low', priority: 1 }));
    const high = await create(
      project,
      contractBody({
        name: 'high',
        priority: 5,
        classifier: {
          intentContains: ['Deploy  Service'],
          requiredCapabilities: ['k8s'],
          metadata: { app: 'crm' },
        },
      }),
    );
    const other = await create(
      project,
      contractBody({ name: 'other', classifier: { intentContains: ['invoice'] } }),
    );
    const fallback = await create(
      project,
      contractBody({ name: 'fb', fallback: true, classifier: undefined, priority: 0 }),
    );

    const res = await resolve(project, {
      intent: '  Please ＤＥＰＬＯＹ   service now ',
      required_capabilities: ['k8s'],
      metadata: { app: 'crm' },
    });
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d.matched).toBe(true);
    expect(d.contract).toEqual({
      contract_id: high.contract_id,
      name: 'high',
      priority: 5,
      is_fallback: false,
    });
    expect(d.template).toEqual({
      key: high.template.key,
      version: '1.0.0',
      definition: {
        required_capabilities: ['code'],
        artifact_schema: { name: 'report', version: '1' },
        guardrails: { human_approval_required: false },
        stages: [{ key: high.template.key, title: 'high', required_capabilities: ['code'] }],
      },
    });
    expect(d.explanation.normalized_intent).toBe('please deploy service now');
    expect(d.explanation.winner_rule).toBe('priority');
    expect(d.explanation.active_contracts).toBe(4);
    expect(d.explanation.unlisted_contracts).toBe(1);
    expect(d.explanation.candidates.map((c: Json) => c.contract_id)).toEqual([
      high.contract_id,
      low.contract_id,
      fallback.contract_id,
    ]);
    expect(d.explanation.candidates[0].criteria).toEqual([
      expect.objectContaining({ kind: 'intent_contains', value: 'deploy service', passed: true }),
      expect.objectContaining({ kind: 'required_capability', value: 'k8s', passed: true }),
      expect.objectContaining({ kind: 'metadata', value: 'app=crm', passed: true }),
    ]);
    expect(d.explanation.candidates[2].criteria).toEqual([
      expect.objectContaining({ kind: 'fallback', passed: true }),
    ]);
    expect(d.explanation.candidates.map((c: Json) => c.contract_id)).not.toContain(other.contract_id);

    const again = await resolve(project, {
      intent: '  Please ＤＥＰＬＯＹ   service now ',
      required_capabilities: ['k8s'],
      metadata: { app: 'crm' },
    });
    expect(again.body).toEqual(res.body);

    const withoutCap = await resolve(project, { intent: 'deploy service', metadata: { app: 'crm' } });
    expect(withoutCap.body.data.contract.contract_id).toBe(low.contract_id);
    const listed = withoutCap.body.data.explanation.candidates.find(
      (c: Json) => c.contract_id === high.contract_id,
    );
    expect(listed.matched).toBe(false);
    expect(listed.criteria.find((c: Json) => c.kind === 'required_capability').passed).toBe(false);
  });

  test('when nothing matches, then matched is false with no contract or template', async () => {
    const project = await createProject('NOMATCH');
    await create(project, contractBody());
    const res = await resolve(project, { intent: 'something else entirely' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ matched: false, contract: null, template: null });
    expect(res.body.data.explanation).toMatchObject({
      winner_rule: null,
      winner_reason: null,
      unlisted_contracts: 1,
    });
  });

  test('when a contract is retired, then resolve no longer picks it, and a reactivated one comes back', async () => {
    const project = await createProject('RETIRE');
    const c = await create(project, contractBody({ classifier: { intentContains: ['retire me'] } }));
    expect((await resolve(project, { intent: 'please retire me' })).body.data.matched).toBe(true);
    await call('PATCH', `${base(project)}/contracts/${c.contract_id}`, writer, { is_active: false });
    const after = await resolve(project, { intent: 'please retire me' });
    expect(after.body.data.matched).toBe(false);
    expect(after.body.data.explanation.active_contracts).toBe(0);
    await call('PATCH', `${base(project)}/contracts/${c.contract_id}`, writer, {
      is_active: true,
      priority: 4,
    });
    const back = await resolve(project, { intent: 'please retire me' });
    expect(back.body.data.contract).toMatchObject({ contract_id: c.contract_id, priority: 4 });
  });

  test('when the same contracts are inserted in different orders, then the same contract wins', async () => {
    const specs = [
      { name: 'p1-one', priority: 1, classifier: { intentContains: ['ship'] } },
      { name: 'p2-one', priority: 2, classifier: { intentContains: ['ship'] } },
      {
        name: 'p2-two',
        priority: 2,
        classifier: { intentContains: ['ship', 'release'], requiredCapabilities: ['ci'] },
      },
      { name: 'p2-fb', priority: 2, fallback: true, classifier: undefined },
      { name: 'p9-miss', priority: 9, classifier: { intentContains: ['never'] } },
    ];
    const orders = [
      [0, 1, 2, 3, 4],
      [4, 3, 2, 1, 0],
      [2, 0, 4, 1, 3],
    ];
    const winners: string[] = [];
    for (const [i, order] of orders.entries()) {
      const project = await createProject(`ORD${i}`);
      for (const at of order) await create(project, contractBody(specs[at] as object));
      const res = await resolve(project, { intent: 'Ship the release', required_capabilities: ['ci'] });
      winners.push(res.body.data.contract.name);
      expect(res.body.data.explanation.winner_rule).toBe('criteria_matched');
    }
    expect(winners).toEqual(['p2-two', 'p2-two', 'p2-two']);
  });

  test('when resolve runs, then no row is created in any table', async () => {
    const project = await createProject('NOWRITE');
    await create(project, contractBody({ classifier: { intentContains: ['count'] } }));
    await create(project, contractBody({ fallback: true, classifier: undefined }));
    const before = await countAllRows();
    for (const intent of ['count rows', 'nothing', 'COUNT']) {
      expect(
        (await resolve(project, { intent, required_capabilities: ['x'], metadata: { a: 'b' } })).status,
      ).toBe(200);
    }
    expect(await countAllRows()).toEqual(before);
  });

  test('when the intent is empty or longer than 10 000 characters, then 400; at 10 000 it is accepted', async () => {
    expect((await resolve(s.project.id, { intent: '' })).status).toBe(400);
    expect((await resolve(s.project.id, { intent: 'a'.repeat(10_001) })).status).toBe(400);
    expect((await resolve(s.project.id, { intent: 'a'.repeat(10_000) })).status).toBe(200);
    expect((await resolve(s.project.id, { intent: 'x', metadata: { a: 1 } })).status).toBe(400);
    expect((await resolve(s.project.id, { intent: 'x', extra: true })).status).toBe(400);
  });
});

describe('access', () => {
  test('when a key lacks the scope, then 403 scope_missing; no key, 401; another workspace project, 404', async () => {
    const c = await create(s.project.id, contractBody());
    const none = await s.key(['workflows:read']);
    const otherKey = await s.otherProject.key(['workflow-contracts:read', 'workflow-contracts:write']);
    const ops: [string, (p: string) => string, unknown, 'read' | 'write'][] = [
      ['GET', (p) => `${base(p)}/contracts`, undefined, 'read'],
      ['POST', (p) => `${base(p)}/contracts`, contractBody(), 'write'],
      ['GET', (p) => `${base(p)}/contracts/${c.contract_id}`, undefined, 'read'],
      ['PATCH', (p) => `${base(p)}/contracts/${c.contract_id}`, { name: 'n' }, 'write'],
      ['POST', (p) => `${base(p)}/resolve-intent`, { intent: 'deploy' }, 'read'],
    ];
    for (const [method, path, body, need] of ops) {
      const anonymous = await call(method, path(s.project.id), undefined, body);
      expect(anonymous.status).toBe(401);
      const missing = await call(method, path(s.project.id), need === 'write' ? reader : none, body);
      expect(missing.status).toBe(403);
      expect(missing.body.code).toBe('scope_missing');
      const foreign = await call(method, path(s.project.id), otherKey, body);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('project_not_found');
    }
    const crossContract = await create(s.project.id, contractBody());
    const own = await createProject('ACCESS2');
    const wrongProject = await call('GET', `${base(own)}/contracts/${crossContract.contract_id}`, reader);
    expect(wrongProject.status).toBe(404);
  });
});

describe('fuzzed bodies', () => {
  function rand(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
      state = (state * 1103515245 + 12345) >>> 0;
      return state / 2 ** 32;
    };
  }
  function value(next: () => number, depth = 0): unknown {
    const pick = Math.floor(next() * (depth > 2 ? 6 : 9));
    switch (pick) {
      case 0:
        return null;
      case 1:
        return next() < 0.5;
      case 2:
        return Math.floor(next() * 2e6) - 1e6;
      case 3:
        return next() * 1e9;
      case 4:
        return ['', ' ', 'deploy', 'x'.repeat(600), '\u0000', 'Ｄｅｐｌｏｙ', '{}'][Math.floor(next() * 7)];
      case 5:
        return 'str' + Math.floor(next() * 100);
      case 6:
        return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
      default: {
        const keys = [
          'name',
          'priority',
          'classifier',
          'fallback',
          'template',
          'is_active',
          'intentContains',
          'requiredCapabilities',
          'metadata',
          'key',
          'version',
          'required_capabilities',
          'artifact_schema',
          'guardrails',
          'stages',
          'intent',
          'human_approval_required',
          '__proto__',
          'constructor',
        ];
        const obj: Record<string, unknown> = {};
        for (let i = Math.floor(next() * 5); i > 0; i -= 1) {
          obj[keys[Math.floor(next() * keys.length)] as string] = value(next, depth + 1);
        }
        return obj;
      }
    }
  }
  /** Valid bodies with one part replaced by a random value, plus random shapes. */
  function bodies(seed: number, valid: () => Record<string, Json>): unknown[] {
    const next = rand(seed);
    const out: unknown[] = ['', 'not json', '{', '[]', 'null', '"x"', '{"name":'];
    while (out.length < 100) {
      if (next() < 0.4) {
        out.push(value(next));
        continue;
      }
      const body = valid();
      const paths = [
        ['name'],
        ['priority'],
        ['classifier'],
        ['classifier', 'intentContains'],
        ['classifier', 'metadata'],
        ['template'],
        ['template', 'stages'],
        ['template', 'guardrails'],
        ['template', 'artifact_schema'],
        ['fallback'],
        ['intent'],
        ['required_capabilities'],
        ['metadata'],
        ['is_active'],
      ];
      const path = paths[Math.floor(next() * paths.length)] as string[];
      let target: Json = body;
      for (const part of path.slice(0, -1)) target = target[part] ?? (target[part] = {});
      target[path[path.length - 1] as string] = value(next);
      out.push(body);
    }
    return out;
  }

  test('when ~100 random bodies hit each write and resolve endpoint, then every answer is 2xx or a 4xx problem, never 5xx', async () => {
    const c = await create(s.project.id, contractBody());
    const targets: [string, string, () => Record<string, Json>][] = [
      ['POST', `${base(s.project.id)}/contracts`, () => contractBody()],
      ['PATCH', `${base(s.project.id)}/contracts/${c.contract_id}`, () => contractBody()],
      [
        'POST',
        `${base(s.project.id)}/resolve-intent`,
        () => ({ intent: 'deploy', required_capabilities: ['a'], metadata: { a: 'b' } }),
      ],
    ];
    for (const [i, [method, path, valid]] of targets.entries()) {
      for (const body of bodies(1000 + i, valid)) {
        const raw = typeof body === 'string' ? body : JSON.stringify(body);
        const res = await call(method, path, writer, raw);
        if (res.status >= 500)
          throw new Error(`${method} ${path} ${raw} → ${res.status} ${JSON.stringify(res.body)}`);
        if (res.status >= 400) expect(res.type).toMatch(/problem\+json/);
      }
    }
  });
});
