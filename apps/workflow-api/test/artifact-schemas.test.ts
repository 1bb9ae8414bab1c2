import { createHash } from 'node:crypto';
import { ALL_SCOPES } from '@svc/auth';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

let s: WorkflowTestStack;
let readKey: string;
let writeKey: string;
let bothKey: string;

beforeAll(async () => {
  s = await startWorkflowTestStack();
  [readKey, writeKey, bothKey] = await Promise.all([
    s.key(['artifact-schemas:read']),
    s.key(['artifact-schemas:write']),
    s.key(['artifact-schemas:read', 'artifact-schemas:write']),
  ]);
}, 60_000);
afterAll(() => s.close());

interface Reply {
  status: number;
  type: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A raw HTTP call, for requests the typed client would refuse to build. */
async function call(
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
  rawBody?: string,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (key) headers['x-api-key'] = key;
  if (body !== undefined || rawBody !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers,
    body: rawBody ?? (body !== undefined ? JSON.stringify(body) : undefined),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON; kept as text
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: parsed };
}

const base = () => `/api/v1/workspaces/${s.workspace.id}/artifact-schemas`;

let counter = 0;
const uniqueName = (stem = 'report') => `${stem}-${(counter += 1)}`;

const reportSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['title', 'score'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', minLength: 1 },
    score: { type: 'integer', minimum: 0, maximum: 100 },
    tags: { type: 'array', items: { $ref: '#/$defs/tag' } },
    reviewed_at: { type: ['string', 'null'], format: 'date-time' },
  },
  $defs: { tag: { type: 'string', pattern: '^[a-z]+$' } },
};

async function register(
  jsonSchema: unknown = reportSchema,
  overrides: Record<string, unknown> = {},
  key = writeKey,
): Promise<Reply> {
  return call('POST', base(), key, {
    project_id: s.project.id,
    name: uniqueName(),
    version: '1.0.0',
    json_schema: jsonSchema,
    ...overrides,
  });
}

const canonicalHash = (value: unknown): string => {
  const canonical = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : v !== null && typeof v === 'object'
        ? `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
            .join(',')}}`
        : JSON.stringify(v);
  return createHash('sha256').update(canonical(value)).digest('hex');
};

/** Same content, every object's keys in reverse order. */
const reordered = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(reordered)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k, x]) => [k, reordered(x)]),
        )
      : v;

async function auditActions(targetId: string): Promise<string[]> {
  const rows = await s.database.prisma.auditEvent.findMany({ where: { targetId }, orderBy: { id: 'asc' } });
  return rows.map((r) => r.action);
}

describe('register an artifact schema version', () => {
  test('when a new version is registered, then 201 returns it with the canonical hash, and it is audited', async () => {
    const client = s.client(writeKey);
    const res = await client.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
      params: { path: { workspaceId: s.workspace.id } },
      body: { project_id: s.project.id, name: 'release-notes', version: '2.1.0', json_schema: reportSchema },
    });
    expect(res.response.status).toBe(201);
    const data = res.data!.data;
    expect(data).toMatchObject({
      workspace_id: s.workspace.id,
      project_id: s.project.id,
      name: 'release-notes',
      version: '2.1.0',
      json_schema: reportSchema,
      schema_hash: canonicalHash(reportSchema),
      deprecated_at: null,
    });
    expect(data.id).toMatch(/^asc_/);
    const row = await s.database.prisma.artifactSchema.findUniqueOrThrow({ where: { id: data.id } });
    expect(row.schemaHash).toBe(canonicalHash(reportSchema));
    const audit = await s.database.prisma.auditEvent.findMany({ where: { targetId: data.id } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'artifact_schema.registered',
      workspaceId: s.workspace.id,
      projectId: s.project.id,
      actorKind: 'api_key',
      targetType: 'artifact_schema',
    });
  });

  test('when the same version is registered again with the same schema (keys reordered), then 200 returns the original and nothing is audited', async () => {
    const name = uniqueName();
    const first = await register(reportSchema, { name });
    expect(first.status).toBe(201);
    const again = await register(reordered(reportSchema), { name });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.body.data.schema_hash).toBe(first.body.data.schema_hash);
    expect(await auditActions(first.body.data.id)).toEqual(['artifact_schema.registered']);
  });

  test('when the same version is registered with another schema, then 409 artifact_schema_version_immutable and the stored schema is unchanged', async () => {
    const name = uniqueName();
    const first = await register(reportSchema, { name });
    const changed = { ...reportSchema, required: ['title'] };
    const conflict = await register(changed, { name });
    expect(conflict.status).toBe(409);
    expect(conflict.type).toContain('application/problem+json');
    expect(conflict.body.code).toBe('artifact_schema_version_immutable');
    const row = await s.database.prisma.artifactSchema.findUniqueOrThrow({
      where: { id: first.body.data.id },
    });
    expect(row.jsonSchema).toEqual(reportSchema);
    const next = await register(changed, { name, version: '1.1.0' });
    expect(next.status).toBe(201);
  });

  test('when the same new version is registered concurrently, then exactly one row exists and every answer names it', async () => {
    const name = uniqueName();
    const replies = await Promise.all(Array.from({ length: 6 }, () => register(reportSchema, { name })));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(replies.map((r) => r.body.data.id)).size).toBe(1);
    expect(await s.database.prisma.artifactSchema.count({ where: { name } })).toBe(1);
  });

  test('when project_id is another workspace’s project or unknown, then 404 project_not_found', async () => {
    for (const projectId of [s.otherProject.id, 'prj_unknown0000000000000000']) {
      const res = await register(reportSchema, { project_id: projectId });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('project_not_found');
    }
  });

  test.each([
    ['an unknown keyword (strict mode)', { type: 'object', propertees: {} }, /unknown keyword/],
    ['a bad type', { type: 'strng' }, /must be equal to one of the allowed values|must match/],
    [
      'a keyword that does not apply to its type (strict types)',
      { type: 'string', minimum: 1 },
      /strict mode/,
    ],
    ['an unknown format', { type: 'string', format: 'not-a-format' }, /unknown format/],
    ['a remote $ref', { $ref: 'https://example.com/schemas/x.json' }, /only local references/],
    ['a relative file $ref', { properties: { a: { $ref: 'other.json#/a' } } }, /only local references/],
    ['a remote $dynamicRef', { $dynamicRef: 'http://example.com/s#meta' }, /only local references/],
    ['a local $ref to nothing', { $ref: '#/$defs/missing' }, /can't resolve|missing/i],
    ['another draft', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }, /schema/],
  ])(
    'when json_schema has %s, then 400 artifact_schema_invalid with ajv’s reasons',
    async (_label, schema, reason) => {
      const res = await register(schema);
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect(res.body.code).toBe('artifact_schema_invalid');
      expect(Array.isArray(res.body.errors)).toBe(true);
      expect(res.body.errors.length).toBeGreaterThan(0);
      expect(res.body.errors.length).toBeLessThanOrEqual(50);
      expect(res.body.errors.map((e: { message: string }) => e.message).join(' | ')).toMatch(reason);
    },
  );

  test('when json_schema is too deep or too large, then 400 artifact_schema_invalid', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i += 1) deep = { type: 'object', properties: { a: deep } };
    const tooDeep = await register(deep);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.code).toBe('artifact_schema_invalid');
    expect(tooDeep.body.errors[0].message).toMatch(/deeper than 64/);

    const big = { type: 'object', description: 'x'.repeat(300 * 1024) };
    const tooBig = await register(big);
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.errors[0].message).toMatch(/larger than 262144 bytes/);
  });

  test('when data keywords hold a "$ref" string, then it is not taken for a reference', async () => {
    const res = await register({
      type: 'object',
      properties: { link: { type: 'object', const: { $ref: 'https://example.com/x' } } },
      examples: [{ link: { $ref: 'https://example.com/x' } }],
    });
    expect(res.status).toBe(201);
  });

  test.each([
    ['an upper-case name', { name: 'Report' }],
    ['a name starting with a dash', { name: '-report' }],
    ['a too long name', { name: 'a'.repeat(101) }],
    ['a version with whitespace', { version: '1.0 beta' }],
    ['an empty version', { version: '' }],
    ['a too long version', { version: '1'.repeat(65) }],
    ['a boolean schema', { json_schema: true }],
    ['an array schema', { json_schema: [] }],
    ['an unknown field', { extra: 1 }],
    ['a malformed project id', { project_id: '../../etc' }],
  ])('when the body has %s, then 400 validation_failed', async (_label, overrides) => {
    const res = await register(reportSchema, overrides);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  test('when a version label is not semver, then it is accepted as given', async () => {
    const res = await register(reportSchema, { version: '2026-11-21.rc1' });
    expect(res.status).toBe(201);
    expect(res.body.data.version).toBe('2026-11-21.rc1');
  });
});

describe('inspect artifact schema versions', () => {
  test('when listed with project, name and version, then exactly that version is returned without its body', async () => {
    const name = uniqueName('inspect');
    const v1 = await register(reportSchema, { name, version: '1.0.0' });
    const v2 = await register({ type: 'object' }, { name, version: '2.0.0' });
    const list = await s.client(readKey).GET('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
      params: { path: { workspaceId: s.workspace.id }, query: { project_id: s.project.id, name } },
    });
    expect(list.response.status).toBe(200);
    expect(list.data!.data.map((x) => x.id)).toEqual([v1.body.data.id, v2.body.data.id]);
    expect(list.data!.data[0]).not.toHaveProperty('json_schema');
    expect(list.data!.next_cursor).toBeNull();

    const one = await call('GET', `${base()}?project_id=${s.project.id}&name=${name}&version=2.0.0`, readKey);
    expect(one.body.data).toHaveLength(1);
    expect(one.body.data[0]).toMatchObject({ id: v2.body.data.id, deprecated_at: null });
  });

  test('when listed with a limit, then pages follow next_cursor to the end', async () => {
    const name = uniqueName('paged');
    const ids: string[] = [];
    for (const version of ['1', '2', '3'])
      ids.push((await register({ type: 'object' }, { name, version })).body.data.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await call(
        'GET',
        `${base()}?name=${name}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        readKey,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((x: { id: string }) => x.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
  });

  test('when one version is fetched by id, then its JSON Schema and deprecated_at are returned', async () => {
    const created = await register();
    const res = await s.client(readKey).GET('/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}', {
      params: { path: { workspaceId: s.workspace.id, schemaId: created.body.data.id } },
    });
    expect(res.response.status).toBe(200);
    expect(res.data!.data).toEqual(created.body.data);
    expect(res.data!.data.deprecated_at).toBeNull();
  });

  test('when an unknown id is fetched, then 404 artifact_schema_not_found', async () => {
    const res = await call('GET', `${base()}/asc_00000000000000000000000000`, readKey);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('artifact_schema_not_found');
  });

  test('when listed with a malformed filter, then 400 validation_failed', async () => {
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=x',
      'name=UPPER',
      'project_id=%20',
      'version=a%20b',
    ]) {
      const res = await call('GET', `${base()}?${query}`, readKey);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });
});

describe('validate a payload against a version', () => {
  let schemaId: string;
  beforeAll(async () => {
    schemaId = (await register()).body.data.id;
  });
  const validate = (payload: unknown, key = readKey) =>
    s.client(key).POST('/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}/validate', {
      params: { path: { workspaceId: s.workspace.id, schemaId } },
      body: { payload },
    });

  test('when the payload conforms, then valid is true with no errors', async () => {
    const res = await validate({
      title: 'Q3',
      score: 93,
      tags: ['ops'],
      reviewed_at: '2026-11-21T10:00:00Z',
    });
    expect(res.response.status).toBe(200);
    expect(res.data!.data).toEqual({ valid: true, errors: [] });
    expect((await validate({ title: 'Q3', score: 0, reviewed_at: null })).data!.data.valid).toBe(true);
  });

  test('when the payload does not conform, then valid is false and every failure names its JSON Pointer', async () => {
    const res = await validate({
      title: '',
      score: 101,
      tags: ['OK', 3],
      reviewed_at: 'yesterday',
      extra: 1,
    });
    expect(res.response.status).toBe(200);
    const { valid, errors } = res.data!.data;
    expect(valid).toBe(false);
    const paths = errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['/title', '/score', '/tags/0', '/tags/1', '/reviewed_at', '']),
    );
    expect(errors.find((e) => e.path === '')!.message).toContain("'extra'");
  });

  test('when the payload is not an object at all, then it is reported, not refused', async () => {
    for (const payload of [null, 42, 'text', [], true]) {
      const res = await validate(payload);
      expect(res.response.status).toBe(200);
      expect(res.data!.data.valid).toBe(false);
      expect(res.data!.data.errors[0]!.path).toBe('');
    }
  });

  test('when a payload fails many times, then at most 50 errors are reported', async () => {
    const many = await register({ type: 'array', items: { type: 'string' } });
    const res = await call('POST', `${base()}/${many.body.data.id}/validate`, readKey, {
      payload: Array.from({ length: 200 }, (_, i) => i),
    });
    expect(res.status).toBe(200);
    expect(res.body.data.valid).toBe(false);
    expect(res.body.data.errors).toHaveLength(50);
  });

  test('when the body has no payload or extra fields, then 400 validation_failed', async () => {
    for (const body of [{}, { payload: 1, other: 2 }, [], 'x']) {
      const res = await call('POST', `${base()}/${schemaId}/validate`, readKey, body);
      expect(res.status).toBe(400);
      // A bare string is refused by the strict JSON parser before validation.
      expect(['validation_failed', 'malformed_json']).toContain(res.body.code);
    }
    const none = await call('POST', `${base()}/${schemaId}/validate`, readKey);
    expect(none.status).toBe(400);
  });

  test('when the schema id is unknown, then 404 artifact_schema_not_found', async () => {
    const res = await call('POST', `${base()}/asc_00000000000000000000000000/validate`, readKey, {
      payload: 1,
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('artifact_schema_not_found');
  });

  test('when many payloads are validated, then each answer stays correct (the compiled validator is reused)', async () => {
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => validate({ title: 't', score: i * 5 })),
    );
    expect(replies.map((r) => r.data!.data.valid)).toEqual(
      Array.from({ length: 30 }, (_, i) => i * 5 <= 100),
    );
  });
});

describe('deprecate a version', () => {
  test('when deprecated twice, then deprecated_at is set once, kept, audited once, and validation still works', async () => {
    const name = uniqueName('old');
    const created = await register(reportSchema, { name });
    const id = created.body.data.id as string;
    const client = s.client(writeKey);
    const path = { workspaceId: s.workspace.id, schemaId: id };
    const first = await client.POST(
      '/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}/deprecate',
      {
        params: { path },
      },
    );
    expect(first.response.status).toBe(200);
    const deprecatedAt = first.data!.data.deprecated_at;
    expect(deprecatedAt).toEqual(expect.any(String));
    const second = await client.POST(
      '/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}/deprecate',
      {
        params: { path },
      },
    );
    expect(second.response.status).toBe(200);
    expect(second.data!.data.deprecated_at).toBe(deprecatedAt);
    expect(await auditActions(id)).toEqual(['artifact_schema.registered', 'artifact_schema.deprecated']);

    const fetched = await call('GET', `${base()}/${id}`, readKey);
    expect(fetched.body.data.deprecated_at).toBe(deprecatedAt);
    const listed = await call('GET', `${base()}?name=${name}`, readKey);
    expect(listed.body.data[0].deprecated_at).toBe(deprecatedAt);
    const validated = await call('POST', `${base()}/${id}/validate`, readKey, {
      payload: { title: 'a', score: 1 },
    });
    expect(validated.body.data.valid).toBe(true);

    const reRegistered = await register(reportSchema, { name });
    expect(reRegistered.status).toBe(200);
    expect(reRegistered.body.data.deprecated_at).toBe(deprecatedAt);
  });

  test('when deprecated concurrently, then one audit event is written', async () => {
    const id = (await register()).body.data.id as string;
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => call('POST', `${base()}/${id}/deprecate`, writeKey)),
    );
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => r.body.data.deprecated_at)).size).toBe(1);
    expect(await auditActions(id)).toEqual(['artifact_schema.registered', 'artifact_schema.deprecated']);
  });

  test('when anyone tries to restore a version, then there is no route for it (404/405) and it stays deprecated', async () => {
    const id = (await register()).body.data.id as string;
    await call('POST', `${base()}/${id}/deprecate`, bothKey);
    const attempts: [string, string, unknown][] = [
      ['POST', `${base()}/${id}/restore`, undefined],
      ['POST', `${base()}/${id}/undeprecate`, undefined],
      ['DELETE', `${base()}/${id}/deprecate`, undefined],
      ['PUT', `${base()}/${id}/deprecate`, undefined],
      ['PATCH', `${base()}/${id}`, { deprecated_at: null }],
      ['PUT', `${base()}/${id}`, { deprecated_at: null }],
      ['DELETE', `${base()}/${id}`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(method, path, bothKey, body);
      expect([404, 405]).toContain(res.status);
    }
    const row = await s.database.prisma.artifactSchema.findUniqueOrThrow({ where: { id } });
    expect(row.deprecatedAt).not.toBeNull();
  });

  test('when the id is unknown, then 404 artifact_schema_not_found', async () => {
    const res = await call('POST', `${base()}/asc_00000000000000000000000000/deprecate`, writeKey);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('artifact_schema_not_found');
  });
});

describe('artifact-schema access', () => {
  let schemaId: string;
  beforeAll(async () => {
    schemaId = (await register()).body.data.id;
  });

  const routes = (workspaceId: string): { method: string; path: string; body?: unknown; scope: string }[] => {
    const root = `/api/v1/workspaces/${workspaceId}/artifact-schemas`;
    return [
      { method: 'GET', path: root, scope: 'artifact-schemas:read' },
      {
        method: 'POST',
        path: root,
        body: { project_id: s.project.id, name: uniqueName('acl'), version: '1', json_schema: {} },
        scope: 'artifact-schemas:write',
      },
      { method: 'GET', path: `${root}/${schemaId}`, scope: 'artifact-schemas:read' },
      {
        method: 'POST',
        path: `${root}/${schemaId}/validate`,
        body: { payload: {} },
        scope: 'artifact-schemas:read',
      },
      { method: 'POST', path: `${root}/${schemaId}/deprecate`, scope: 'artifact-schemas:write' },
    ];
  };

  test('when a key holds every other workflow and hub scope, then every artifact-schema route answers 403 scope_missing', async () => {
    const broad = await s.key(ALL_SCOPES.filter((scope) => !scope.startsWith('artifact-schemas:')));
    for (const route of routes(s.workspace.id)) {
      const res = await call(route.method, route.path, broad, route.body);
      expect({ route: route.path, status: res.status }).toEqual({ route: route.path, status: 403 });
      expect(res.body.code).toBe('scope_missing');
      expect(res.body.missing_scopes).toEqual([route.scope]);
    }
  });

  test('when a key holds only the other artifact-schema scope, then 403 scope_missing', async () => {
    for (const route of routes(s.workspace.id)) {
      const key = route.scope === 'artifact-schemas:read' ? writeKey : readKey;
      const res = await call(route.method, route.path, key, route.body);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('scope_missing');
    }
  });

  test('when no key is sent, or an unknown one, then 401', async () => {
    for (const route of routes(s.workspace.id)) {
      expect((await call(route.method, route.path, undefined, route.body)).status).toBe(401);
      expect(
        (await call(route.method, route.path, 'svc_aaaaaaaaaaaa_' + 'b'.repeat(43), route.body)).status,
      ).toBe(401);
    }
  });

  test('when another workspace’s key addresses this workspace, then 403 workspace_forbidden and nothing changes', async () => {
    const foreign = await s.otherProject.key(['artifact-schemas:read', 'artifact-schemas:write']);
    for (const route of routes(s.workspace.id)) {
      const res = await call(route.method, route.path, foreign, route.body);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('workspace_forbidden');
    }
    const row = await s.database.prisma.artifactSchema.findUniqueOrThrow({ where: { id: schemaId } });
    expect(row.deprecatedAt).toBeNull();
  });

  test('when another workspace addresses this workspace’s schema id under its own workspace, then 404', async () => {
    const foreign = await s.otherProject.key(['artifact-schemas:read', 'artifact-schemas:write']);
    const root = `/api/v1/workspaces/${s.otherProject.workspaceId}/artifact-schemas`;
    for (const [method, path, body] of [
      ['GET', `${root}/${schemaId}`, undefined],
      ['POST', `${root}/${schemaId}/validate`, { payload: {} }],
      ['POST', `${root}/${schemaId}/deprecate`, undefined],
    ] as const) {
      const res = await call(method, path, foreign, body);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('artifact_schema_not_found');
    }
    const listed = await call('GET', root, foreign);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    const stolen = await call('POST', root, foreign, {
      project_id: s.project.id,
      name: 'stolen',
      version: '1',
      json_schema: {},
    });
    expect(stolen.status).toBe(404);
    expect(stolen.body.code).toBe('project_not_found');
  });
});

/** Deterministic pseudo-random JSON values and shapes. */
function fuzzer(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const keywords = [
    'type',
    'properties',
    'items',
    'required',
    '$ref',
    '$defs',
    'enum',
    'const',
    'minimum',
    'pattern',
    'format',
    'allOf',
    'anyOf',
    'oneOf',
    'not',
    'if',
    'then',
    'else',
    'additionalProperties',
    '$id',
    '$schema',
    '$dynamicRef',
    '$anchor',
    'prefixItems',
    'unknownWord',
    'project_id',
    'name',
    'version',
    'json_schema',
    'payload',
    '__proto__',
    'constructor',
    '',
  ] as const;
  const strings = [
    '',
    'string',
    'object',
    'array',
    'integer',
    'null',
    '#',
    '#/$defs/a',
    'http://x',
    'date-time',
    '^(a+)$',
    '[',
    '\u0000',
    '😀',
    'x'.repeat(300),
    s.project.id,
    s.otherProject.id,
    '1.0.0',
  ];
  const value = (depth: number): unknown => {
    const roll = next();
    if (depth > 4 || roll < 0.35) {
      return pick<unknown>([null, true, false, 0, -1, 1.5, 1e308, next() * 1000, pick(strings)]);
    }
    if (roll < 0.55) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    const obj: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i -= 1) obj[pick(keywords)] = value(depth + 1);
    return obj;
  };
  return { next, pick, value };
}

describe('fuzzed requests', () => {
  const problemOrSuccess = (res: Reply, context: unknown) => {
    if (res.status >= 500) throw new Error(`5xx for ${JSON.stringify(context).slice(0, 500)}`);
    if (res.status >= 400) expect(res.type).toContain('application/problem+json');
  };

  test('when 100 random bodies are registered, then every answer is a problem or a success, never 5xx', async () => {
    const f = fuzzer(7);
    for (let i = 0; i < 100; i += 1) {
      const body = f.next() < 0.5 ? f.value(0) : { ...(f.value(1) as object), project_id: s.project.id };
      const res = await call('POST', base(), bothKey, body);
      problemOrSuccess(res, body);
    }
  }, 60_000);

  test('when 100 random json_schema objects are registered, then each is 201/200/400, never 5xx', async () => {
    const f = fuzzer(11);
    const statuses = new Set<number>();
    for (let i = 0; i < 100; i += 1) {
      const schema = f.value(0);
      const jsonSchema =
        schema !== null && typeof schema === 'object' && !Array.isArray(schema) ? schema : { x: schema };
      const body = {
        project_id: s.project.id,
        name: uniqueName('fuzz'),
        version: '1',
        json_schema: jsonSchema,
      };
      const res = await call('POST', base(), bothKey, body);
      problemOrSuccess(res, body);
      expect([200, 201, 400]).toContain(res.status);
      statuses.add(res.status);
      if (res.status === 201) {
        const payload = f.value(0);
        const checked = await call('POST', `${base()}/${res.body.data.id}/validate`, bothKey, { payload });
        problemOrSuccess(checked, { jsonSchema, payload });
        // A NUL anywhere in the request is refused at the edge (text_invalid), whatever the schema says.
        if (JSON.stringify(payload).includes('\\u0000')) {
          expect([checked.status, checked.body.code]).toEqual([400, 'text_invalid']);
        } else {
          expect(checked.status).toBe(200);
        }
      }
    }
    expect(statuses.has(400)).toBe(true);
  }, 60_000);

  test('when 100 random bodies are validated, then each answer is 200 or a 4xx problem, never 5xx', async () => {
    const f = fuzzer(13);
    const id = (await register()).body.data.id as string;
    for (let i = 0; i < 100; i += 1) {
      const body = f.next() < 0.5 ? { payload: f.value(0) } : f.value(0);
      const res = await call('POST', `${base()}/${id}/validate`, readKey, body);
      problemOrSuccess(res, body);
    }
  }, 60_000);

  test('when 100 random bodies, ids and queries hit deprecate, get and list, then never 5xx', async () => {
    const f = fuzzer(17);
    const ids = ['asc_x', 'a', 'ASC_1', '%00', '..', 'asc_' + 'z'.repeat(80), 'x_y'];
    for (let i = 0; i < 100; i += 1) {
      const id = encodeURIComponent(String(f.pick(ids)));
      const body = f.value(0);
      problemOrSuccess(await call('POST', `${base()}/${id}/deprecate`, bothKey, body), body);
      problemOrSuccess(await call('GET', `${base()}/${id}`, bothKey), id);
      const query = `limit=${encodeURIComponent(String(f.value(3)))}&name=${encodeURIComponent(String(f.value(3)))}&cursor=${id}`;
      problemOrSuccess(await call('GET', `${base()}?${query}`, bothKey), query);
    }
  }, 60_000);

  test('when the body is malformed JSON or not JSON, then 400/415 problems', async () => {
    for (const raw of ['{', '{"project_id":', 'null', '[1,2', '"\\u00"']) {
      const res = await call('POST', base(), bothKey, undefined, raw);
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
    }
    const text = await fetch(`${s.url}${base()}`, {
      method: 'POST',
      headers: { 'x-api-key': bothKey, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(text.status).toBe(415);
  }, 60_000);
});
