import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import type { ValidateFunction } from 'ajv';
import { PROBLEM_CODES } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';
import { invalidArbitrary, resolveSchema, validArbitrary } from './schema-arbitrary';
import type { Schema } from './schema-arbitrary';
import { documentValidator, parameterValidator } from './validator';

/**
 * Requests drawn from a contract document, sent to a running service, and the checks every answer must
 * pass. A positive request is valid against the operation's schemas (path ids usually name seeded
 * fixtures); a negative one is broken in exactly one place (the body, one query parameter or one path
 * parameter) as the server sees it after parsing, so it must be refused with 400.
 */

export type FuzzActor = 'participant' | 'api_key' | 'agent' | 'service' | 'relay_token' | 'anonymous';
export type FuzzPhase = 'positive' | 'negative';
export type FuzzCheck =
  | 'no_5xx'
  | 'status_documented'
  | 'body_schema'
  | 'code_listed'
  | 'schema_valid_accepted'
  | 'schema_invalid_refused';

/** A check that does not hold for an operation, with the written reason; matching answers skip that check. */
export interface FuzzExemption {
  operationId: string;
  check: FuzzCheck;
  phase?: FuzzPhase;
  status?: number;
  code?: string;
  reason: string;
}

export type FuzzOperation = ReturnType<typeof listOperations>[number];

/** A path parameter: a seeded fixture (picked by index) unless there is none or the draw says otherwise. */
interface PathValue {
  fixture: boolean;
  pick: number;
  literal: string;
}

export interface FuzzRequest {
  phase: FuzzPhase;
  actor: FuzzActor;
  path: Record<string, PathValue>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  /** `undefined`: no body sent. */
  body?: unknown;
  /** Where a negative request is broken (`body`, `query/limit`, `path/teamId`). */
  broken?: string;
  /** Positive requests: whether id fields of the body and query name seeded fixtures too. */
  fieldFixtures?: boolean;
}

/** Body and query fields that hold the id of a resource a path parameter also names. */
const FIELD_FIXTURES: Record<string, string> = {
  project_id: 'projectId',
  team_id: 'teamId',
  agent_id: 'agentId',
  assignee_agent_id: 'agentId',
  runtime_instance_id: 'hostId',
  workflow_contract_id: 'contractId',
  contract_id: 'contractId',
  subscription_id: 'subscriptionId',
  invocation_id: 'invocationId',
  handoff_id: 'handoffId',
};

/** The same object with each top-level id field that has fixtures set to one of them (strings only). */
function withFieldFixtures(value: unknown, fixtures: FuzzTarget['fixtures'], pick: number): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => {
      const list = fixtures[FIELD_FIXTURES[key] ?? ''] ?? [];
      return [key, typeof v === 'string' && list.length > 0 ? list[pick % list.length] : v];
    }),
  );
}

export interface FuzzTarget {
  baseUrl: string;
  /** Request headers that carry each actor's credential; actors left out are not exercised. */
  credentials: Partial<Record<FuzzActor, Record<string, string>>>;
  /** Seeded values for path parameters, by parameter name. */
  fixtures: Record<string, readonly string[]>;
  exemptions: readonly FuzzExemption[];
}

export interface FuzzAnswer {
  url: string;
  method: string;
  status: number;
  contentType: string;
  body: unknown;
  /** Whether every path id named a seeded fixture (otherwise the resource may not exist). */
  fixturesOnly: boolean;
  /** The body as sent (id fields may name fixtures). */
  sentBody: unknown;
}

/** Codes any operation may answer without naming them: the request pipeline's own refusals. */
const PIPELINE_CODES = new Set([
  'malformed_json',
  'payload_too_large',
  'unsupported_encoding',
  'body_encoding_invalid',
  'unsupported_charset',
  'unsupported_media_type',
  'request_aborted',
  'request_size_invalid',
  'body_required',
  'validation_failed',
  'text_invalid',
  'credential_missing',
  'credential_invalid',
  'actor_not_allowed',
  'scope_missing',
  'workspace_forbidden',
  'role_forbidden',
  'method_not_allowed',
]);

const REGISTRY = new Map(PROBLEM_CODES.map((c) => [c.code, c]));

/** The `code`s an operation's own words name (in backticks): its summary, description, responses and parameters. */
export function listedCodes(op: FuzzOperation): Set<string> {
  const text = JSON.stringify([
    op.raw.summary,
    op.raw.description,
    op.raw.responses,
    op.parameters.map((p) => (p as { description?: string }).description),
  ]);
  return new Set([...text.matchAll(/`([a-z][a-z0-9_]*)`/g)].map((m) => m[1] as string));
}

/** A path segment as sent: percent-encoded, with dots encoded too. */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

/** A path segment's text; `.` and `..` are spelled out as segments by URL parsers, so they cannot be sent. */
function wirePath(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === '.' || text === '..' ? `${text}x` : text;
}

function wireQuery(value: unknown): string[] {
  if (value === undefined) return [];
  const one = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  return Array.isArray(value) ? value.map(one) : [one(value)];
}

/** The query as the server's parser hands it over: absent, one string, or repeated keys as an array. */
function parsedQuery(query: Record<string, unknown>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(query)) {
    const wire = wireQuery(value);
    if (wire.length === 1) out[name] = wire[0] as string;
    else if (wire.length > 1) out[name] = wire;
  }
  return out;
}

function paramSchema(params: FuzzOperation['parameters'], where: 'path' | 'query' | 'header'): Schema {
  const list = params.filter((p) => p.in === where);
  return {
    type: 'object',
    properties: Object.fromEntries(list.map((p) => [p.name, p.schema ?? {}])),
    required: list.filter((p) => p.required || where === 'path').map((p) => p.name),
  };
}

/** Draws from `arb` only what `keep` accepts, or `undefined` when a sample finds (almost) nothing to keep. */
function keepOnly<T>(arb: Arbitrary<T>, keep: (v: T) => boolean): Arbitrary<T> | undefined {
  const hits = fc.sample(arb, { numRuns: 40, seed: 1 }).filter(keep).length;
  return hits >= 4 ? arb.filter(keep) : undefined;
}

export interface OperationPlan {
  operation: FuzzOperation;
  /** Actors the operation accepts that the target can act as. */
  actors: FuzzActor[];
  positive: Arbitrary<FuzzRequest>;
  /** `undefined` when nothing of the request can be broken (no parameters, no body). */
  negative: Arbitrary<FuzzRequest> | undefined;
}

/** One plan per operation of the document. */
export function planOperations(doc: OpenApiDocument, actorsAvailable: readonly FuzzActor[]): OperationPlan[] {
  const validator = documentValidator(doc);
  const paramValidator = parameterValidator(doc);
  return listOperations(doc).map((operation) => {
    const actors = (operation.actors as FuzzActor[]).filter((a) => actorsAvailable.includes(a));
    const pathSchema = paramSchema(operation.parameters, 'path');
    const querySchema = paramSchema(operation.parameters, 'query');
    const headerSchema = paramSchema(operation.parameters, 'header');
    const checkQuery = paramValidator(querySchema);
    const requestBody = resolveSchema(doc, operation.raw.requestBody) as {
      content?: Record<string, { schema?: unknown }>;
    };
    const bodySchema = requestBody.content?.['application/json']?.schema;
    const checkBody: ValidateFunction | undefined = bodySchema ? validator(bodySchema) : undefined;

    const pathProps = (pathSchema.properties ?? {}) as Record<string, Schema>;
    const pathValue = (schema: Schema, fixtureShare: number) =>
      fc.record({
        fixture: fc.integer({ min: 1, max: 100 }).map((n) => n <= fixtureShare),
        pick: fc.nat(),
        literal: validArbitrary(doc, schema)
          .map(wirePath)
          .filter((s) => s.length > 0),
      });
    const path = (fixtureShare: number) =>
      fc.record(
        Object.fromEntries(Object.entries(pathProps).map(([k, s]) => [k, pathValue(s, fixtureShare)])),
      ) as Arbitrary<Record<string, PathValue>>;
    const validQuery = keepOnly(validArbitrary(doc, querySchema) as Arbitrary<Record<string, unknown>>, (q) =>
      checkQuery(parsedQuery(q)),
    );
    if (!validQuery) throw new Error(`${operation.operationId}: no valid query could be drawn`);
    // Header values travel as visible ASCII (HTTP carries bytes; fetch refuses anything above U+00FF).
    const checkHeaders = paramValidator(headerSchema);
    const headers = keepOnly(
      (validArbitrary(doc, headerSchema) as Arbitrary<Record<string, unknown>>).map((h) =>
        Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v).replace(/[^\x21-\x7e]/g, 'x')])),
      ),
      (h) => checkHeaders(h),
    );
    if (!headers) throw new Error(`${operation.operationId}: no valid headers could be drawn`);
    const validBody = checkBody
      ? keepOnly(validArbitrary(doc, bodySchema), (b) => checkBody(b))
      : fc.constant(undefined);
    if (!validBody) throw new Error(`${operation.operationId}: no valid body could be drawn`);
    const body = operation.bodyRequired || !checkBody ? validBody : fc.option(validBody, { nil: undefined });
    const actor = actors.length > 0 ? fc.constantFrom(...actors) : fc.constant<FuzzActor>('anonymous');

    const positive = fc.record({
      fieldFixtures: fc.integer({ min: 1, max: 100 }).map((n) => n <= 85),
      phase: fc.constant<FuzzPhase>('positive'),
      actor,
      path: path(85),
      query: validQuery,
      headers,
      body,
    }) as Arbitrary<FuzzRequest>;

    // Negative: every path id names a fixture, so only the broken place can explain a refusal.
    const base = fc.record({ actor, path: path(100), query: validQuery, headers, body: validBody });
    const ways: Arbitrary<FuzzRequest>[] = [];
    if (checkBody && bodySchema) {
      const broken = invalidArbitrary(doc, bodySchema);
      const refused = broken && keepOnly(broken, (b) => !checkBody(JSON.parse(JSON.stringify(b))));
      if (refused) {
        ways.push(
          fc
            .tuple(base, refused)
            .map(([r, b]) => ({ ...r, phase: 'negative' as const, body: b, broken: 'body' })),
        );
      }
    }
    for (const p of operation.parameters.filter((x) => x.in === 'query' || x.in === 'path')) {
      const broken = invalidArbitrary(doc, p.schema ?? {});
      if (!broken) continue;
      const check = paramValidator({ type: 'object', properties: { [p.name]: p.schema ?? {} } });
      const refusedAlone = (v: unknown) => {
        if (p.in === 'path') {
          const wire = wirePath(v);
          return wire.length > 0 && !check({ [p.name]: wire });
        }
        return wireQuery(v).length > 0 && !check(parsedQuery({ [p.name]: v }));
      };
      const refused = keepOnly(broken, refusedAlone);
      if (!refused) continue;
      ways.push(
        fc.tuple(base, refused).map(([r, v]) =>
          p.in === 'path'
            ? {
                ...r,
                phase: 'negative' as const,
                path: { ...r.path, [p.name]: { fixture: false, pick: 0, literal: wirePath(v) } },
                broken: `path/${p.name}`,
              }
            : {
                ...r,
                phase: 'negative' as const,
                query: { ...r.query, [p.name]: v },
                broken: `query/${p.name}`,
              },
        ),
      );
    }
    return { operation, actors, positive, negative: ways.length > 0 ? fc.oneof(...ways) : undefined };
  });
}

/** Sends the request to the target and reads the answer. */
export async function sendRequest(
  target: FuzzTarget,
  op: FuzzOperation,
  req: FuzzRequest,
): Promise<FuzzAnswer> {
  let fixturesOnly = true;
  const path = op.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
    const value = req.path[name] as PathValue;
    const fixtures = target.fixtures[name] ?? [];
    if (!value.fixture || fixtures.length === 0) fixturesOnly = false;
    const chosen =
      value.fixture && fixtures.length > 0
        ? (fixtures[value.pick % fixtures.length] as string)
        : value.literal;
    return encodePathSegment(chosen);
  });
  if (req.fieldFixtures) {
    const pick = Object.values(req.path)[0]?.pick ?? 0;
    req = {
      ...req,
      query: withFieldFixtures(req.query, target.fixtures, pick) as Record<string, unknown>,
      body: withFieldFixtures(req.body, target.fixtures, pick),
    };
  }
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(req.query))
    for (const v of wireQuery(value)) search.append(name, v);
  const qs = search.toString();
  const url = `${target.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  const headers: Record<string, string> = { ...req.headers, ...(target.credentials[req.actor] ?? {}) };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  const method = op.method.toUpperCase();
  const res = await fetch(url, {
    method,
    headers,
    ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: kept as text; the schema check reports it.
  }
  return {
    url,
    method,
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    body,
    fixturesOnly,
    sentBody: req.body,
  };
}

/** Every check the answer fails, minus the exempted ones. */
export function checkAnswer(
  doc: OpenApiDocument,
  target: FuzzTarget,
  op: FuzzOperation,
  req: FuzzRequest,
  answer: FuzzAnswer,
  validator = documentValidator(doc),
): string[] {
  const found: [FuzzCheck, string][] = [];
  const code = (answer.body as { code?: unknown } | undefined)?.code;
  const problem = answer.contentType.startsWith('application/problem+json');
  const responses = (op.raw.responses ?? {}) as Record<string, unknown>;
  const documented =
    responses[String(answer.status)] ?? responses[`${String(answer.status)[0]}XX`] ?? responses.default;
  if (answer.status >= 500) found.push(['no_5xx', `answered ${answer.status}`]);
  if (!documented) found.push(['status_documented', `${answer.status} is not documented`]);
  else {
    const content = (resolveSchema(doc, documented) as { content?: Record<string, { schema?: unknown }> })
      .content;
    const mediaType = answer.contentType.split(';')[0]?.trim() ?? '';
    if (content && answer.body !== undefined) {
      const media = content[mediaType];
      if (!media)
        found.push([
          'body_schema',
          `${mediaType || 'no content type'} is not documented for ${answer.status}`,
        ]);
      else if (media.schema) {
        const validate = validator(media.schema);
        if (!validate(answer.body)) {
          found.push(['body_schema', `body does not match: ${JSON.stringify(validate.errors?.slice(0, 3))}`]);
        }
      }
    }
  }
  if (problem) {
    const entry = typeof code === 'string' ? REGISTRY.get(code) : undefined;
    if (!entry) found.push(['code_listed', `code ${String(code)} is not in the problem registry`]);
    else if (!entry.status.includes(answer.status)) {
      found.push([
        'code_listed',
        `code ${String(code)} is registered for ${entry.status.join('/')}, not ${answer.status}`,
      ]);
    } else if (!PIPELINE_CODES.has(code as string) && !listedCodes(op).has(code as string)) {
      found.push(['code_listed', `code ${String(code)} is not named by the operation`]);
    }
  }
  if (
    req.phase === 'positive' &&
    answer.status === 400 &&
    PIPELINE_CODES.has(String(code)) &&
    !listedCodes(op).has(String(code))
  ) {
    found.push(['schema_valid_accepted', `a schema-valid request was refused with 400 ${String(code)}`]);
  }
  // A path id without a fixture may name nothing: access and existence come before the body (decision 4).
  const existenceFirst =
    !answer.fixturesOnly && !req.broken?.startsWith('path/') && [403, 404].includes(answer.status);
  if (req.phase === 'negative' && answer.status !== 400 && !existenceFirst) {
    found.push(['schema_invalid_refused', `a request broken at ${req.broken} was answered ${answer.status}`]);
  }
  return found
    .filter(
      ([check]) =>
        !target.exemptions.some(
          (e) =>
            (e.operationId === op.operationId || e.operationId === '*') &&
            e.check === check &&
            (e.phase === undefined || e.phase === req.phase) &&
            (e.status === undefined || e.status === answer.status) &&
            (e.code === undefined || e.code === code),
        ),
    )
    .map(([check, message]) => `${check}: ${message}`);
}

/** A failure message that says what was sent and what came back (credentials left out). */
export function describeExchange(req: FuzzRequest, answer: FuzzAnswer, findings: string[]): string {
  return [
    `${answer.method} ${answer.url} as ${req.actor} (${req.phase}${req.broken ? `, broken at ${req.broken}` : ''})`,
    `body sent: ${JSON.stringify(answer.sentBody)?.slice(0, 400)}`,
    `answer ${answer.status} ${answer.contentType}: ${JSON.stringify(answer.body)?.slice(0, 600)}`,
    ...findings.map((f) => `- ${f}`),
  ].join('\n');
}
