import { randomBytes } from 'node:crypto';
import { ALL_SCOPES } from '@svc/auth';
import { hubDocument, workflowDocument } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';
import { SAMPLE_ID } from '@svc/testing';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

/**
 * The text rule against the real hub (its build, as a process) and the Workflow API, generated from their
 * documents: for every operation that takes a JSON body (every operation that stores text), a body built from
 * the operation's schema with NUL or an unpaired surrogate in every string and in an object key; for every
 * operation, the same in each path and query parameter. Each request must be refused with 400 `text_invalid`
 * naming only places that were poisoned — never a 5xx, never stored.
 */

type Schema = Record<string, unknown>;
type Operation = ReturnType<typeof listOperations>[number];
type Poison = 'nul' | 'surrogate';

const POISON: Record<Poison, (text: string) => string> = {
  nul: (text) => `${text}\u0000x`,
  surrogate: (text) => `${text}\uD800`,
};

/** JSON Pointer segment as the service reports it (`~` and `/` escaped, refused characters spelled out). */
function segment(key: string): string {
  return key
    .replace(/\0/g, '\\u0000')
    .replace(/[\uD800-\uDFFF]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16)}`)
    .replace(/~/g, '~0')
    .replace(/\//g, '~1');
}

function resolve(doc: OpenApiDocument, schema: unknown): Schema {
  let node = schema as Schema | undefined;
  for (let i = 0; i < 20 && typeof node?.$ref === 'string'; i += 1) {
    let target: unknown = doc;
    for (const part of (node.$ref as string).slice(2).split('/')) {
      target = (target as Record<string, unknown>)[part];
    }
    node = target as Schema;
  }
  return node ?? {};
}

/**
 * A value of the schema with every string replaced by poisoned text; `places` collects where each poisoned
 * string (or key) sits. Alternatives take their first branch, objects get all their properties, arrays one
 * item, and a free-form map gets one poisoned key.
 */
function sample(
  doc: OpenApiDocument,
  raw: unknown,
  at: string,
  poison: Poison,
  places: Set<string>,
  depth = 0,
): unknown {
  const schema = resolve(doc, raw);
  if (depth > 8) return undefined;
  const alternative = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (alternative?.length) {
    const first = alternative.find((s) => resolve(doc, s).type !== 'null') ?? alternative[0];
    return sample(
      doc,
      { ...schema, oneOf: undefined, anyOf: undefined, ...resolve(doc, first) },
      at,
      poison,
      places,
      depth,
    );
  }
  if (Array.isArray(schema.allOf)) {
    const merged = (schema.allOf as unknown[]).reduce<Schema>(
      (acc, part) => {
        const p = resolve(doc, part);
        return { ...acc, ...p, properties: { ...(acc.properties as object), ...(p.properties as object) } };
      },
      { ...schema, allOf: undefined },
    );
    return sample(doc, merged, at, poison, places, depth);
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  const type =
    types.find((t) => t !== 'null' && t !== undefined) ??
    (schema.properties
      ? 'object'
      : schema.items
        ? 'array'
        : Array.isArray(schema.enum)
          ? typeof schema.enum[0]
          : 'string');
  switch (type) {
    case 'string': {
      places.add(at);
      const base =
        typeof schema.const === 'string'
          ? schema.const
          : Array.isArray(schema.enum)
            ? String(schema.enum[0])
            : 'text';
      return POISON[poison](base);
    }
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'array': {
      const item = sample(doc, schema.items ?? {}, `${at}/0`, poison, places, depth + 1);
      return item === undefined ? [] : [item];
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      for (const [name, sub] of Object.entries(properties)) {
        const value = sample(doc, sub, `${at}/${segment(name)}`, poison, places, depth + 1);
        if (value !== undefined) out[name] = value;
      }
      const extra = schema.additionalProperties;
      if (Object.keys(properties).length === 0 && extra !== false) {
        const key = POISON[poison]('key');
        places.add(`${at}/${segment(key)}`);
        out[key] = sample(
          doc,
          typeof extra === 'object' ? extra : { type: 'string' },
          `${at}/${segment(key)}`,
          poison,
          places,
          depth + 1,
        );
      }
      return out;
    }
    default:
      return null;
  }
}

function jsonBodySchema(doc: OpenApiDocument, op: Operation): unknown {
  const body = resolve(doc, op.raw.requestBody);
  return (body.content as Record<string, { schema?: unknown }> | undefined)?.['application/json']?.schema;
}

let s: WorkflowTestStack;
let apiKey: string;
let agentToken: string;
let relayToken: string;
let hostId: string;
let agentId: string;
let ownerId: string;

async function seed<T>(
  method: string,
  path: string,
  body: unknown,
  auth: Record<string, string>,
): Promise<T> {
  const res = await fetch(`${s.hubUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`seeding ${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

beforeAll(async () => {
  s = await startWorkflowTestStack();
  apiKey = await s.key([...ALL_SCOPES]);
  const owner = { authorization: `Bearer ${s.adminToken}` };
  const ws = `/api/v1/workspaces/${s.workspace.slug}`;
  ownerId = (await seed<{ participant: { id: string } }>('GET', '/api/v1/me', undefined, owner)).participant
    .id;
  await seed(
    'PUT',
    `${ws}/provider-credentials/local`,
    { secret: `local-${randomBytes(12).toString('hex')}` },
    owner,
  );
  const host = await seed<{ host: { id: string }; relay_token: string }>(
    'POST',
    `${ws}/runtime-hosts`,
    {
      name: 'text-host',
      hostname: 'runtime-1.internal',
      workdir_root: '/srv/agents',
      console_public_base_url: 'https://console.example.test',
      relay_public_url: 'https://relay.example.test',
    },
    owner,
  );
  hostId = host.host.id;
  relayToken = host.relay_token;
  await seed(
    'POST',
    `/api/v1/runtime-hosts/${hostId}/heartbeat`,
    { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' },
    { 'x-api-key': apiKey },
  );
  const agent = await seed<{ id: string }>(
    'POST',
    `${ws}/agents`,
    {
      name: 'text-agent',
      runtime_instance_id: hostId,
      capabilities: ['code'],
      project_code: s.project.code,
      model: 'local/echo',
    },
    owner,
  );
  agentId = agent.id;
  agentToken = (
    await seed<{ agent_token: string }>(
      'POST',
      `/api/v1/agents/${agentId}/start`,
      { launch_path: 'direct' },
      owner,
    )
  ).agent_token;
}, 120_000);
afterAll(() => s?.close());

/** The credential of the first actor kind the operation accepts (an owner for participants, all scopes for keys). */
function credentialOf(op: Operation): Record<string, string> | undefined {
  for (const actor of op.actors) {
    if (actor === 'participant') return { authorization: `Bearer ${s.adminToken}` };
    if (actor === 'api_key') return { 'x-api-key': apiKey };
    if (actor === 'agent') return { authorization: `Bearer ${agentToken}` };
    if (actor === 'relay_token') return { 'x-svc-relay-token': relayToken };
    if (actor === 'anonymous') return {};
  }
  return undefined;
}

/** Path values the guards accept: the caller's own workspace, project, host and agent; other ids are unknown. */
function pathOf(op: Operation, poisoned?: { name: string; poison: Poison }): string {
  const home: Record<string, string> = {
    workspace: s.workspace.slug,
    workspaceId: s.workspace.id,
    projectId: s.project.id,
    hostId,
    runtimeInstanceId: hostId,
    agentId,
    participantId: ownerId,
    // Names, not ids: a well-formed name no environment has.
    environment: 'no-such-environment',
  };
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = home[name] ?? SAMPLE_ID;
    return encodeURIComponent(poisoned?.name === name ? POISON[poisoned.poison](value) : value);
  });
}

interface Case {
  title: string;
  doc: 'hub' | 'workflow';
  op: Operation;
  path: string;
  query?: string;
  body?: string;
  places: Set<string>;
}

function casesOf(docName: 'hub' | 'workflow', doc: OpenApiDocument): Case[] {
  const cases: Case[] = [];
  for (const op of listOperations(doc)) {
    if (op.actors.every((a) => a === 'service')) continue; // no public caller: nothing to send
    for (const poison of ['nul', 'surrogate'] as const) {
      const schema = op.hasJsonBody ? jsonBodySchema(doc, op) : undefined;
      if (schema) {
        const places = new Set<string>();
        const body = sample(doc, schema, 'body', poison, places);
        if (places.size === 0 && typeof body === 'object' && body !== null && !Array.isArray(body)) {
          // A body without text of its own: a key is still text the request carries.
          const key = POISON[poison]('key');
          (body as Record<string, unknown>)[key] = true;
          places.add(`body/${segment(key)}`);
        }
        if (places.size > 0) {
          cases.push({
            title: `${op.operationId} body (${poison})`,
            doc: docName,
            op,
            path: '',
            body: JSON.stringify(body),
            places,
          });
        }
      }
      if (poison === 'nul') {
        for (const p of op.parameters.filter((p) => p.in === 'path')) {
          cases.push({
            title: `${op.operationId} path ${p.name} (nul)`,
            doc: docName,
            op,
            path: p.name,
            places: new Set([`path/${p.name}`]),
          });
        }
        for (const p of op.parameters.filter((p) => p.in === 'query')) {
          cases.push({
            title: `${op.operationId} query ${p.name} (nul)`,
            doc: docName,
            op,
            path: '',
            query: p.name,
            places: new Set([`query/${p.name}`]),
          });
        }
      }
    }
  }
  return cases;
}

const cases = [...casesOf('hub', hubDocument), ...casesOf('workflow', workflowDocument)];

test('when the documents are read, then every operation with a JSON body has a generated body case', () => {
  for (const [name, doc] of [
    ['hub', hubDocument],
    ['workflow', workflowDocument],
  ] as const) {
    const withBody = listOperations(doc).filter(
      (op) => op.hasJsonBody && !op.actors.every((a) => a === 'service'),
    );
    expect(withBody.length).toBeGreaterThan(10);
    const covered = new Set(cases.filter((c) => c.doc === name && c.body).map((c) => c.op.operationId));
    expect(withBody.map((op) => op.operationId).filter((id) => !covered.has(id))).toEqual([]);
  }
});

test.each(cases.map((c) => [c.title, c] as const))('%s: 400 text_invalid', async (_title, c) => {
  const base = c.doc === 'hub' ? s.hubUrl : s.url;
  const path = pathOf(c.op, c.path ? { name: c.path, poison: 'nul' } : undefined);
  const query = c.query ? `?${c.query}=${encodeURIComponent(POISON.nul('q'))}` : '';
  const credential = credentialOf(c.op);
  if (!credential) throw new Error(`${c.op.operationId}: no actor to call it with`);
  const sendsBody = ['post', 'put', 'patch'].includes(c.op.method);
  const res = await fetch(`${base}${path}${query}`, {
    method: c.op.method.toUpperCase(),
    headers: {
      ...credential,
      ...(sendsBody ? { 'content-type': 'application/json' } : {}),
      'idempotency-key': `text-${randomBytes(6).toString('hex')}`,
    },
    body: sendsBody ? (c.body ?? '{}') : undefined,
  });
  const problem = (await res.json().catch(() => ({}))) as { code?: string; errors?: { location: string }[] };
  expect({ status: res.status, code: problem.code }).toEqual({ status: 400, code: 'text_invalid' });
  expect(problem.errors?.length).toBeGreaterThan(0);
  for (const error of problem.errors ?? []) expect(c.places).toContain(error.location);
});

describe('classifier metadata keys', () => {
  const contracts = () => `${s.url}/api/v1/projects/${s.project.id}/workflow/contracts`;
  const send = async (method: string, url: string, body: string) => {
    const res = await fetch(url, {
      method,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const contract = (classifier: string) =>
    `{"name":"proto ${randomBytes(3).toString('hex')}","priority":1,"classifier":${classifier},` +
    `"template":{"key":"tpl-${randomBytes(4).toString('hex')}","version":"1.0.0","required_capabilities":["code"],` +
    `"artifact_schema":{"name":"report","version":"1"},"guardrails":{"human_approval_required":false}}}`;

  test('when a classifier has only a __proto__ metadata key, then create is refused, never stored as empty', async () => {
    const res = await send('POST', contracts(), contract('{"metadata":{"__proto__":"x"}}'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'validation_failed',
      errors: [{ location: 'body/classifier/metadata/__proto__' }],
    });
  });

  test('when __proto__ sits beside a real criterion, then create is refused too (no key is dropped silently)', async () => {
    const res = await send(
      'POST',
      contracts(),
      contract('{"intentContains":["ship it"],"metadata":{"__proto__":"x","team":"ops"}}'),
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  test('when a PATCH sends a __proto__-only classifier, then the stored classifier stays as it was', async () => {
    const created = await send(
      'POST',
      contracts(),
      contract('{"intentContains":["deploy proto"],"metadata":{"team":"ops"}}'),
    );
    expect(created.status).toBe(201);
    const id = (created.body as unknown as { data: { contract_id: string } }).data.contract_id;
    const patched = await send(
      'PATCH',
      `${contracts()}/${id}`,
      '{"classifier":{"metadata":{"__proto__":"x"}}}',
    );
    expect(patched.status).toBe(400);
    const read = await fetch(`${contracts()}/${id}`, { headers: { 'x-api-key': apiKey } });
    const stored = ((await read.json()) as { data: { classifier: unknown } }).data.classifier;
    expect(stored).toEqual({
      intentContains: ['deploy proto'],
      requiredCapabilities: [],
      metadata: { team: 'ops' },
    });
  });
});
