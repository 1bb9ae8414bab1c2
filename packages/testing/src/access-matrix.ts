import type { OpenApiDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';

/**
 * The unauthorized matrix of a contract document: for every operation, the cases a caller without access must
 * be refused with, generated from the document's `x-svc-actors` and `x-svc-scopes` (decisions 4 and 5):
 *
 * - no credential → 401 `credential_missing`;
 * - each actor kind the operation does not list → 403 `actor_not_allowed` (or 401 `credential_invalid` when
 *   the service does not read that kind of credential at all);
 * - an API key lacking one declared scope → 403 `scope_missing`;
 * - a caller of another workspace → 403 `workspace_forbidden` for a `{workspace}` / `{workspaceId}` path, 404
 *   for a resource addressed by its own id.
 *
 * Generation is pure; `checkAccessCase` sends one case over HTTP. Test files wire them into jest, so a new
 * operation in a document gets its cases without anyone writing them.
 */

/** Actor kinds of `x-svc-actors` other than `anonymous` (the same list as `ACTOR_KINDS` of `@svc/auth`). */
export const MATRIX_ACTOR_KINDS = ['participant', 'api_key', 'agent', 'service', 'relay_token'] as const;
export type MatrixActorKind = (typeof MATRIX_ACTOR_KINDS)[number];

/** Actor kinds that belong to a workspace, so "a caller of another workspace" exists for them. */
const WORKSPACE_ACTORS: readonly MatrixActorKind[] = ['participant', 'api_key', 'agent'];
/** Path parameters naming a workspace: a foreign one is 403, whether it exists or not (decision 5). */
const WORKSPACE_PARAMS = ['workspace', 'workspaceId'];

/** The expected code of a 404 for a resource addressed by id: the code names the resource (`project_not_found`). */
export const RESOURCE_NOT_FOUND = '<resource>_not_found';

const ACTOR_LABELS: Record<MatrixActorKind, string> = {
  participant: 'a participant token',
  api_key: 'an API key',
  agent: 'an agent token',
  service: 'a service token',
  relay_token: 'a relay token',
};

/** A contract document, as the router reads it. */
export type MatrixDocument = OpenApiDocument;

export interface MatrixOperation {
  operationId: string;
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  path: string;
  actors: string[];
  scopes: string[];
  pathParams: string[];
  /** Status codes the document lists for the operation. */
  responses: string[];
}

export interface Answer {
  status: number;
  code: string;
}

export type AccessCheck = 'no_credential' | 'wrong_actor' | 'scope_missing' | 'other_workspace';

export interface AccessCase {
  /** Stable id, used to list known deviations: `<operationId> <check>[ <actor>][ <scope>]`. */
  id: string;
  /** "when …, then …" */
  name: string;
  check: AccessCheck;
  operation: MatrixOperation;
  /** Whose credential is presented; none for `no_credential`. */
  actor?: MatrixActorKind;
  /** `scope_missing`: the declared scope the key lacks. */
  lacking?: string;
  /** `other_workspace`: path parameters are taken from the other workspace's resources. */
  foreign: boolean;
  expected: Answer;
}

export interface AccessMatrix {
  title: string;
  operations: MatrixOperation[];
  anonymous: MatrixOperation[];
  protected: MatrixOperation[];
  cases: AccessCase[];
}

export interface MatrixOptions {
  /**
   * Credential kinds the service under test does not read at all (its resolver has no method for them):
   * `authenticate` answers such a credential 401 `credential_invalid`, before any actor check.
   */
  unreadCredentials?: readonly MatrixActorKind[];
}

/**
 * Every operation of a document with its access annotations, read by the router's own `listOperations` (so the
 * matrix and the server can never read a document differently); throws on one without them.
 */
export function readOperations(doc: MatrixDocument): MatrixOperation[] {
  return listOperations(doc).map((op) => ({
    operationId: op.operationId,
    method: op.method as MatrixOperation['method'],
    path: op.path,
    actors: [...op.actors],
    scopes: op.scopes,
    pathParams: op.pathParams,
    responses: Object.keys((op.raw.responses as Record<string, unknown> | undefined) ?? {}),
  }));
}

function label(op: MatrixOperation): string {
  return `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
}

function casesOf(op: MatrixOperation, unread: readonly MatrixActorKind[]): AccessCase[] {
  const cases: AccessCase[] = [
    {
      id: `${op.operationId} no_credential`,
      name: 'when no credential is sent, then 401 credential_missing',
      check: 'no_credential',
      operation: op,
      foreign: false,
      expected: { status: 401, code: 'credential_missing' },
    },
  ];
  for (const actor of MATRIX_ACTOR_KINDS) {
    if (op.actors.includes(actor)) continue;
    const isUnread = unread.includes(actor);
    cases.push({
      id: `${op.operationId} wrong_actor ${actor}`,
      name: isUnread
        ? `when ${ACTOR_LABELS[actor]} (a credential this service does not read) is sent, then 401 credential_invalid`
        : `when ${ACTOR_LABELS[actor]} is sent (an actor the contract does not list), then 403 actor_not_allowed`,
      check: 'wrong_actor',
      operation: op,
      actor,
      foreign: false,
      expected: isUnread
        ? { status: 401, code: 'credential_invalid' }
        : { status: 403, code: 'actor_not_allowed' },
    });
  }
  if (op.actors.includes('api_key')) {
    for (const scope of op.scopes) {
      cases.push({
        id: `${op.operationId} scope_missing ${scope}`,
        name: `when an API key holding every scope but ${scope} is sent, then 403 scope_missing`,
        check: 'scope_missing',
        operation: op,
        actor: 'api_key',
        lacking: scope,
        foreign: false,
        expected: { status: 403, code: 'scope_missing' },
      });
    }
  }
  const [scoping] = op.pathParams;
  if (scoping !== undefined) {
    const byWorkspace = op.pathParams.some((p) => WORKSPACE_PARAMS.includes(p));
    for (const actor of WORKSPACE_ACTORS) {
      if (!op.actors.includes(actor)) continue;
      cases.push({
        id: `${op.operationId} other_workspace ${actor}`,
        name: byWorkspace
          ? `when ${ACTOR_LABELS[actor]} of another workspace is sent, then 403 workspace_forbidden`
          : `when ${ACTOR_LABELS[actor]} of another workspace asks for this resource, then 404 like a missing one`,
        check: 'other_workspace',
        operation: op,
        actor,
        foreign: true,
        expected: byWorkspace
          ? { status: 403, code: 'workspace_forbidden' }
          : { status: 404, code: RESOURCE_NOT_FOUND },
      });
    }
  }
  return cases;
}

/**
 * The matrix of a document. Throws when an answer the matrix expects is not among the responses the
 * document lists for the operation, so the contract and the matrix cannot drift apart silently.
 */
export function generateAccessMatrix(doc: MatrixDocument, options: MatrixOptions = {}): AccessMatrix {
  const operations = readOperations(doc);
  const anonymous = operations.filter((op) => op.actors.includes('anonymous'));
  const protectedOps = operations.filter((op) => !op.actors.includes('anonymous'));
  const unknown = protectedOps.flatMap((op) =>
    op.actors
      .filter((a) => !(MATRIX_ACTOR_KINDS as readonly string[]).includes(a))
      .map((a) => `${label(op)}: unknown actor kind '${a}'`),
  );
  if (unknown.length > 0) throw new Error(unknown.join('\n'));
  const cases = protectedOps.flatMap((op) => casesOf(op, options.unreadCredentials ?? []));
  const undocumented = cases
    .filter((c) => !c.operation.responses.includes(String(c.expected.status)))
    .map((c) => `${label(c.operation)}: "${c.name}" but the document lists no ${c.expected.status}`);
  if (undocumented.length > 0) {
    throw new Error(`answers the contract does not document:\n${[...new Set(undocumented)].join('\n')}`);
  }
  return {
    title: doc.info?.title ?? 'document',
    operations,
    anonymous,
    protected: protectedOps,
    cases,
  };
}

/** Returns `list`, or throws when it is empty: a generated list that comes out empty must not pass silently. */
export function nonEmpty<T>(list: readonly T[], what: string): T[] {
  if (list.length === 0) throw new Error(`the generated list of ${what} is empty`);
  return [...list];
}

/** The cases of a matrix grouped by operation, as `[label, cases]` rows for `describe.each`. */
export function casesByOperation(matrix: AccessMatrix): [string, AccessCase[]][] {
  const rows = new Map<string, AccessCase[]>();
  for (const c of matrix.cases) {
    const key = label(c.operation);
    rows.set(key, [...(rows.get(key) ?? []), c]);
  }
  return nonEmpty([...rows.entries()], `protected operations of ${matrix.title}`);
}

/**
 * How the test makes a valid credential of each kind for the service under test, all of one workspace (the
 * callers' workspace). An API key is made with exactly the scopes asked for.
 */
export interface CredentialFactories {
  participant?: () => Promise<string> | string;
  api_key?: (scopes: readonly string[]) => Promise<string> | string;
  agent?: () => Promise<string> | string;
  service?: () => Promise<string> | string;
  relay_token?: () => Promise<string> | string;
}

/** Actor kinds the matrix presents a credential of, for which `factories` has no factory. */
export function missingCredentialFactories(
  matrix: AccessMatrix,
  factories: CredentialFactories,
): MatrixActorKind[] {
  const needed = new Set(matrix.cases.flatMap((c) => (c.actor ? [c.actor] : [])));
  return MATRIX_ACTOR_KINDS.filter((kind) => needed.has(kind) && factories[kind] === undefined);
}

/** Throws when the matrix needs a credential kind the test cannot make. */
export function assertCredentialFactories(matrix: AccessMatrix, factories: CredentialFactories): void {
  const missing = missingCredentialFactories(matrix, factories);
  if (missing.length > 0) {
    throw new Error(
      `${matrix.title}: the matrix needs credentials of ${missing.join(', ')} but the test has no factory for them`,
    );
  }
}

/** A known deviation: the answer the service gives today instead of the contract's, and why. */
export interface KnownDeviation {
  actual: Answer;
  reason: string;
}

/**
 * Throws when a deviation names no generated case or repeats the contract's answer, so the list only ever
 * holds real, current deviations.
 */
export function assertDeviations(matrix: AccessMatrix, deviations: Record<string, KnownDeviation>): void {
  const byId = new Map(matrix.cases.map((c) => [c.id, c]));
  const wrong = Object.entries(deviations).flatMap(([id, deviation]) => {
    const c = byId.get(id);
    if (!c) return [`${id}: no such case`];
    if (c.expected.status === deviation.actual.status && c.expected.code === deviation.actual.code) {
      return [`${id}: the listed answer is the contract's own`];
    }
    return [];
  });
  if (wrong.length > 0) throw new Error(`${matrix.title}: bad deviation list:\n${wrong.join('\n')}`);
}

export interface MatrixTarget {
  /** Base URL of the running service (read when a case runs). */
  url: () => string;
  credentials: CredentialFactories;
  /** Every scope a key may hold; a `scope_missing` key holds all of them but one. */
  allScopes: readonly string[];
  /** Path parameter values in the callers' workspace; parameters not listed get `SAMPLE_ID`. */
  params: () => Record<string, string>;
  /**
   * Path parameter values naming resources of another workspace. An `other_workspace` case needs one for the
   * first path parameter of its operation (the one that scopes the request).
   */
  foreignParams: () => Record<string, string>;
}

/** A well-formed id no resource has. */
export const SAMPLE_ID = 'x_0000';

const HEADER_OF: Record<MatrixActorKind, (credential: string) => Record<string, string>> = {
  participant: (c) => ({ authorization: `Bearer ${c}` }),
  agent: (c) => ({ authorization: `Bearer ${c}` }),
  api_key: (c) => ({ 'x-api-key': c }),
  service: (c) => ({ 'x-svc-service-token': c }),
  relay_token: (c) => ({ 'x-svc-relay-token': c }),
};

async function credentialFor(c: AccessCase, target: MatrixTarget): Promise<Record<string, string>> {
  if (!c.actor) return {};
  const factory = target.credentials[c.actor];
  if (!factory) throw new Error(`${c.id}: no credential factory for ${c.actor}`);
  const scopes = c.lacking !== undefined ? target.allScopes.filter((s) => s !== c.lacking) : target.allScopes;
  const credential =
    c.actor === 'api_key' ? await factory(scopes) : await (factory as () => Promise<string>)();
  return HEADER_OF[c.actor](credential);
}

function urlOf(c: AccessCase, target: MatrixTarget): string {
  const home = target.params();
  const foreign = c.foreign ? target.foreignParams() : {};
  const [scoping] = c.operation.pathParams;
  if (c.foreign && (scoping === undefined || foreign[scoping] === undefined)) {
    throw new Error(`${c.id}: no resource of another workspace for {${scoping}}`);
  }
  return c.operation.path.replace(
    /\{(\w+)\}/g,
    (_, name: string) => foreign[name] ?? home[name] ?? SAMPLE_ID,
  );
}

/**
 * Sends one case to the service and returns the answer expected (the contract's, or a listed deviation's)
 * beside the answer given. A 404 whose code ends in `_not_found` is reported as `RESOURCE_NOT_FOUND`.
 */
export async function checkAccessCase(
  c: AccessCase,
  target: MatrixTarget,
  deviations: Record<string, KnownDeviation> = {},
): Promise<{ expected: Answer; actual: Answer }> {
  const headers = { 'content-type': 'application/json', ...(await credentialFor(c, target)) };
  const res = await fetch(`${target.url()}${urlOf(c, target)}`, {
    method: c.operation.method.toUpperCase(),
    headers,
    body: ['post', 'put', 'patch'].includes(c.operation.method) ? '{}' : undefined,
  });
  const body = (await res.json().catch(() => ({}))) as { code?: unknown };
  const code = typeof body.code === 'string' ? body.code : '';
  const actual = {
    status: res.status,
    code:
      c.expected.code === RESOURCE_NOT_FOUND && res.status === 404 && /^[a-z_]+_not_found$/.test(code)
        ? RESOURCE_NOT_FOUND
        : code,
  };
  return { expected: deviations[c.id]?.actual ?? c.expected, actual };
}

/** The test name of a case: a listed deviation says so, with the answer given today. */
export function caseTitle(c: AccessCase, deviations: Record<string, KnownDeviation> = {}): string {
  const deviation = deviations[c.id];
  return deviation
    ? `${c.name} [KNOWN DEVIATION: answers ${deviation.actual.status} ${deviation.actual.code}; ${deviation.reason}]`
    : c.name;
}

/** Answers an anonymous operation gives without a credential must not be 401 or 403. */
export async function callAnonymous(url: string, op: MatrixOperation): Promise<number> {
  const res = await fetch(`${url}${op.path.replace(/\{(\w+)\}/g, SAMPLE_ID)}`, {
    method: op.method.toUpperCase(),
  });
  await res.arrayBuffer();
  return res.status;
}
