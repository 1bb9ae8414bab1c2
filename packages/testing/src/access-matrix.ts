import type { OpenApiDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';
import {
  CREDENTIAL_HEADERS,
  CREDENTIAL_LABELS,
  MATRIX_ACTOR_KINDS,
  MATRIX_CREDENTIAL_KINDS,
  MATRIX_TOKEN_KINDS,
  forgedCredential,
} from './access-matrix-credentials';
import type { MatrixActorKind, MatrixCredentialKind, MatrixTokenKind } from './access-matrix-credentials';

export * from './access-matrix-credentials';
export * from './access-matrix-coverage';
export * from './access-matrix-attacks';

/**
 * The unauthorized matrix of a contract document: for every operation and every credential kind, the answer a
 * caller without access must get, generated from the document's `x-svc-actors` and `x-svc-scopes` (decisions 4
 * and 5):
 *
 * - no credential → 401 `credential_missing`;
 * - a forged credential of each kind (right format, issued by nobody) → 401 `credential_invalid`;
 * - each actor kind the operation does not list → 403 `actor_not_allowed` (or 401 `credential_invalid` when
 *   the service does not read that kind of credential at all);
 * - a console ticket or runtime credential (hub tokens that are no actor) → 401 `credential_invalid` where the
 *   service does not read them;
 * - an API key lacking one declared scope → 403 `scope_missing`;
 * - a caller of another workspace → 403 `workspace_forbidden` for a `{workspace}` / `{workspaceId}` path, 404
 *   for a resource addressed by its own id;
 * - a resource of another workspace named inside the caller's own path (`/teams/{mine}/agents/{theirs}`) → 404;
 * - an anonymous operation answers a documented status other than 401/403, with no credential or a forged one
 *   of any kind (anonymous operations read no credential);
 * - an operation that guards a credential itself (`selfGuarded`) refuses a missing and a wrong one with its own
 *   codes, and lets its own credential through.
 *
 * Generation is pure; `checkAccessCase` sends one case over HTTP. Test files wire them into jest, so a new
 * operation in a document gets its cases without anyone writing them, and `createMatrixCoverage` fails a test
 * file whose run left an operation or a case unproven.
 */

/** Actor kinds that belong to a workspace, so "a caller of another workspace" exists for them. */
const WORKSPACE_ACTORS: readonly MatrixActorKind[] = ['participant', 'api_key', 'agent'];
/** Path parameters naming a workspace: a foreign one is 403, whether it exists or not (decision 5). */
const WORKSPACE_PARAMS = ['workspace', 'workspaceId'];

/** The expected code of a 404 for a resource addressed by id: the code names the resource (`project_not_found`). */
export const RESOURCE_NOT_FOUND = '<resource>_not_found';

/**
 * The expected answer of an anonymous operation (or of a self-guarded one given its own credential): any status
 * the document lists for the operation except 401 and 403.
 */
export const ANSWERED: Answer = { status: 0, code: '<documented answer, neither 401 nor 403>' };

const INVALID: Answer = { status: 401, code: 'credential_invalid' };

/** A contract document, as the router reads it. */
export type MatrixDocument = OpenApiDocument;

export interface MatrixOperation {
  operationId: string;
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  path: string;
  actors: string[];
  scopes: string[];
  pathParams: string[];
  /** `x-svc-participant-roles`: the workspace roles a participant needs (undefined: any member). */
  participantRoles?: string[];
  /** Status codes the document lists for the operation. */
  responses: string[];
}

export interface Answer {
  status: number;
  code: string;
}

export type AccessCheck =
  | 'anonymous'
  | 'no_credential'
  | 'forged'
  | 'wrong_actor'
  | 'wrong_token'
  | 'own_credential'
  | 'scope_missing'
  | 'other_workspace'
  | 'foreign_id'
  | 'role_missing';

export interface AccessCase {
  /** Stable id, used to list known deviations: `<operationId> <check>[ <kind>][ <scope or parameter>]`. */
  id: string;
  /** "when …, then …" */
  name: string;
  check: AccessCheck;
  operation: MatrixOperation;
  /** Whose credential is presented; none for `no_credential` and the bare `anonymous` case. */
  actor?: MatrixCredentialKind;
  /** The credential is forged (`forgedCredential`) rather than made by the test's factory. */
  forged: boolean;
  /** `scope_missing`: the declared scope the key lacks. */
  lacking?: string;
  /** `role_missing`: the workspace role of the participant, one the operation does not list. */
  role?: string;
  /** Path parameters whose values are taken from the other workspace's resources. */
  foreign: string[];
  expected: Answer;
}

export interface AccessMatrix {
  title: string;
  operations: MatrixOperation[];
  anonymous: MatrixOperation[];
  protected: MatrixOperation[];
  cases: AccessCase[];
}

/** An operation listed as anonymous whose handler checks one credential itself, before the body. */
export interface SelfGuard {
  credential: MatrixCredentialKind;
  /** The answer without that credential (whatever else is sent). */
  missing: Answer;
  /** The answer to a wrong one. */
  invalid: Answer;
}

export interface MatrixOptions {
  /**
   * Credential kinds the service under test does not read at all (its resolver has no method for them):
   * `authenticate` answers such a credential 401 `credential_invalid`, before any actor check. Console tickets
   * and runtime credentials are unread unless `tokenActors` names them.
   */
  unreadCredentials?: readonly MatrixCredentialKind[];
  /** Hub tokens that are no actor kind but which this service reads as one (a console ticket as a participant). */
  tokenActors?: Partial<Record<MatrixTokenKind, MatrixActorKind>>;
  /** Anonymous operations that guard a credential themselves, by operationId. */
  selfGuarded?: Record<string, SelfGuard>;
  /**
   * Path parameters that name something other than a workspace's resource (a provider, an environment's name),
   * so no "resource of another workspace" exists for them.
   */
  nameParams?: readonly string[];
  /**
   * Generate `role_missing` cases: for each operation a participant may call that lists
   * `x-svc-participant-roles`, a participant of the callers' workspace in each role it leaves out is refused
   * with 403 `role_forbidden` (needs the `participant_role` credential factory).
   */
  roleCases?: boolean;
  /** Operations whose use case checks the role itself and answers its own code instead of `role_forbidden`. */
  roleCodes?: Record<string, string>;
}

/** Every workspace role, as the hub's contract lists them. */
export const WORKSPACE_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;

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
    ...(op.participantRoles ? { participantRoles: [...op.participantRoles] } : {}),
    responses: Object.keys((op.raw.responses as Record<string, unknown> | undefined) ?? {}),
  }));
}

export function operationLabel(op: MatrixOperation): string {
  return `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
}

type CaseInput = Omit<AccessCase, 'operation' | 'forged' | 'foreign'> &
  Partial<Pick<AccessCase, 'forged' | 'foreign'>>;

function anonymousCases(op: MatrixOperation): CaseInput[] {
  return [
    {
      id: `${op.operationId} anonymous`,
      name: 'when no credential is sent, then it answers as documented (neither 401 nor 403)',
      check: 'anonymous',
      expected: ANSWERED,
    },
    ...MATRIX_CREDENTIAL_KINDS.map((kind): CaseInput => ({
      id: `${op.operationId} anonymous ${kind}`,
      name: `when a forged ${CREDENTIAL_LABELS[kind].replace(/^an? /, '')} is sent, then it is not read: it answers as documented`,
      check: 'anonymous',
      actor: kind,
      forged: true,
      expected: ANSWERED,
    })),
  ];
}

function selfGuardedCases(op: MatrixOperation, guard: SelfGuard): CaseInput[] {
  const own = CREDENTIAL_LABELS[guard.credential];
  return [
    {
      id: `${op.operationId} no_credential`,
      name: `when no credential is sent, then ${guard.missing.status} ${guard.missing.code}`,
      check: 'no_credential',
      expected: guard.missing,
    },
    ...MATRIX_CREDENTIAL_KINDS.map((kind): CaseInput => ({
      id: `${op.operationId} forged ${kind}`,
      name:
        kind === guard.credential
          ? `when a wrong ${own.replace(/^an? /, '')} is sent, then ${guard.invalid.status} ${guard.invalid.code}`
          : `when ${CREDENTIAL_LABELS[kind]} is sent instead of ${own}, then ${guard.missing.status} ${guard.missing.code}`,
      check: 'forged',
      actor: kind,
      forged: true,
      expected: kind === guard.credential ? guard.invalid : guard.missing,
    })),
    {
      id: `${op.operationId} own_credential ${guard.credential}`,
      name: `when the right ${own.replace(/^an? /, '')} is sent, then it passes the guard and answers as documented`,
      check: 'own_credential',
      actor: guard.credential,
      expected: ANSWERED,
    },
  ];
}

function protectedCases(op: MatrixOperation, options: MatrixOptions): CaseInput[] {
  const unread = options.unreadCredentials ?? [];
  const cases: CaseInput[] = [
    {
      id: `${op.operationId} no_credential`,
      name: 'when no credential is sent, then 401 credential_missing',
      check: 'no_credential',
      expected: { status: 401, code: 'credential_missing' },
    },
  ];
  for (const kind of MATRIX_CREDENTIAL_KINDS) {
    cases.push({
      id: `${op.operationId} forged ${kind}`,
      name: `when a forged ${CREDENTIAL_LABELS[kind].replace(/^an? /, '')} (issued by nobody) is sent, then 401 credential_invalid`,
      check: 'forged',
      actor: kind,
      forged: true,
      expected: INVALID,
    });
  }
  for (const actor of MATRIX_ACTOR_KINDS) {
    if (op.actors.includes(actor)) continue;
    const isUnread = unread.includes(actor);
    cases.push({
      id: `${op.operationId} wrong_actor ${actor}`,
      name: isUnread
        ? `when ${CREDENTIAL_LABELS[actor]} (a credential this service does not read) is sent, then 401 credential_invalid`
        : `when ${CREDENTIAL_LABELS[actor]} is sent (an actor the contract does not list), then 403 actor_not_allowed`,
      check: 'wrong_actor',
      actor,
      expected: isUnread ? INVALID : { status: 403, code: 'actor_not_allowed' },
    });
  }
  for (const token of MATRIX_TOKEN_KINDS) {
    const readAs = unread.includes(token) ? undefined : options.tokenActors?.[token];
    if (readAs !== undefined && op.actors.includes(readAs)) continue;
    cases.push({
      id: `${op.operationId} wrong_token ${token}`,
      name:
        readAs === undefined
          ? `when ${CREDENTIAL_LABELS[token]} (a hub token this service does not accept) is sent, then 401 credential_invalid`
          : `when ${CREDENTIAL_LABELS[token]} (read as ${CREDENTIAL_LABELS[readAs]}, which the contract does not list) is sent, then 403 actor_not_allowed`,
      check: 'wrong_token',
      actor: token,
      expected: readAs === undefined ? INVALID : { status: 403, code: 'actor_not_allowed' },
    });
  }
  if (op.actors.includes('api_key')) {
    for (const scope of op.scopes) {
      cases.push({
        id: `${op.operationId} scope_missing ${scope}`,
        name: `when an API key holding every scope but ${scope} is sent, then 403 scope_missing`,
        check: 'scope_missing',
        actor: 'api_key',
        lacking: scope,
        expected: { status: 403, code: 'scope_missing' },
      });
    }
  }
  const [scoping, ...inner] = op.pathParams;
  if (scoping === undefined) return cases;
  if (options.roleCases && op.actors.includes('participant') && op.participantRoles) {
    const code = options.roleCodes?.[op.operationId] ?? 'role_forbidden';
    for (const role of WORKSPACE_ROLES.filter((r) => !op.participantRoles!.includes(r))) {
      cases.push({
        id: `${op.operationId} role_missing ${role}`,
        name: `when a participant who is ${role} of the workspace is sent (the contract lists ${op.participantRoles.join(', ')}), then 403 ${code}`,
        check: 'role_missing',
        actor: 'participant',
        role,
        expected: { status: 403, code },
      });
    }
  }
  const byWorkspace = WORKSPACE_PARAMS.includes(scoping);
  const resources = inner.filter((p) => !WORKSPACE_PARAMS.includes(p) && !options.nameParams?.includes(p));
  for (const actor of WORKSPACE_ACTORS) {
    if (!op.actors.includes(actor)) continue;
    if (byWorkspace || !options.nameParams?.includes(scoping)) {
      cases.push({
        id: `${op.operationId} other_workspace ${actor}`,
        name: byWorkspace
          ? `when ${CREDENTIAL_LABELS[actor]} of another workspace is sent, then 403 workspace_forbidden`
          : `when ${CREDENTIAL_LABELS[actor]} of another workspace asks for this resource, then 404 like a missing one`,
        check: 'other_workspace',
        actor,
        foreign: [scoping],
        expected: byWorkspace
          ? { status: 403, code: 'workspace_forbidden' }
          : { status: 404, code: RESOURCE_NOT_FOUND },
      });
    }
    for (const param of resources) {
      cases.push({
        id: `${op.operationId} foreign_id ${actor} ${param}`,
        name: `when ${CREDENTIAL_LABELS[actor]} names another workspace's {${param}} inside its own path, then 404 like a missing one`,
        check: 'foreign_id',
        actor,
        foreign: [param],
        expected: { status: 404, code: RESOURCE_NOT_FOUND },
      });
    }
  }
  return cases;
}

function isDocumented(c: AccessCase): boolean {
  if (c.expected === ANSWERED) {
    return c.operation.responses.some((status) => status !== '401' && status !== '403');
  }
  return c.operation.responses.includes(String(c.expected.status));
}

/**
 * The matrix of a document. Throws when an answer the matrix expects is not among the responses the
 * document lists for the operation, so the contract and the matrix cannot drift apart silently.
 */
export function generateAccessMatrix(doc: MatrixDocument, options: MatrixOptions = {}): AccessMatrix {
  const operations = readOperations(doc);
  const anonymous = operations.filter((op) => op.actors.includes('anonymous'));
  const protectedOps = operations.filter((op) => !op.actors.includes('anonymous'));
  const unknown = [
    ...protectedOps.flatMap((op) =>
      op.actors
        .filter((a) => !(MATRIX_ACTOR_KINDS as readonly string[]).includes(a))
        .map((a) => `${operationLabel(op)}: unknown actor kind '${a}'`),
    ),
    ...Object.keys(options.selfGuarded ?? {})
      .filter((id) => !anonymous.some((op) => op.operationId === id))
      .map((id) => `selfGuarded names '${id}', which is no anonymous operation of the document`),
  ];
  if (unknown.length > 0) throw new Error(unknown.join('\n'));
  const cases = operations.flatMap((op) => {
    const guard = options.selfGuarded?.[op.operationId];
    const inputs = guard
      ? selfGuardedCases(op, guard)
      : op.actors.includes('anonymous')
        ? anonymousCases(op)
        : protectedCases(op, options);
    return inputs.map((c): AccessCase => ({ forged: false, foreign: [], ...c, operation: op }));
  });
  const undocumented = cases
    .filter((c) => !isDocumented(c))
    .map((c) => `${operationLabel(c.operation)}: "${c.name}" but the document lists no ${c.expected.status}`);
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
    const key = operationLabel(c.operation);
    rows.set(key, [...(rows.get(key) ?? []), c]);
  }
  return nonEmpty([...rows.entries()], `operations of ${matrix.title}`);
}

/**
 * How the test makes a valid credential of each kind for the service under test, all of one workspace (the
 * callers' workspace). An API key is made with exactly the scopes asked for.
 */
export interface CredentialFactories {
  participant?: () => Promise<string> | string;
  /** A participant of the callers' workspace in `role` (for `role_missing` cases). */
  participant_role?: (role: string) => Promise<string> | string;
  api_key?: (scopes: readonly string[]) => Promise<string> | string;
  agent?: () => Promise<string> | string;
  service?: () => Promise<string> | string;
  relay_token?: () => Promise<string> | string;
  console_ticket?: () => Promise<string> | string;
  runtime_credential?: () => Promise<string> | string;
}

/**
 * Credential kinds the matrix presents a genuine credential of, for which `factories` has no factory
 * (`participant_role` when it has role cases and no factory of participants by role).
 */
export function missingCredentialFactories(matrix: AccessMatrix, factories: CredentialFactories): string[] {
  const needed = new Set(matrix.cases.flatMap((c) => (c.actor && !c.forged ? [c.actor] : [])));
  const missing: string[] = MATRIX_CREDENTIAL_KINDS.filter(
    (kind) => needed.has(kind) && factories[kind] === undefined,
  );
  if (matrix.cases.some((c) => c.role !== undefined) && factories.participant_role === undefined)
    missing.push('participant_role');
  return missing;
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
   * Path parameter values naming resources of another workspace, for `other_workspace` (the first path
   * parameter) and `foreign_id` cases (any other).
   */
  foreignParams: () => Record<string, string>;
  /**
   * Valid request bodies by operationId, sent with `foreign_id` and `role_missing` cases: the caller has access
   * to the path, so the body is validated before the resource is looked up (or, where the use case checks the
   * role itself, before the role), and an empty body would be refused first (every other case sends `{}`: access
   * is decided before the body is read).
   */
  bodies?: Record<string, unknown>;
  /** Sends a request; defaults to the global `fetch` (a Unix-socket service passes its own). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** Records the cases that answered as expected, for `createMatrixCoverage`. */
  coverage?: { record(caseId: string): void };
}

/** A well-formed id no resource has. */
export const SAMPLE_ID = 'x_0000';

async function credentialFor(c: AccessCase, target: MatrixTarget): Promise<Record<string, string>> {
  if (!c.actor) return {};
  if (c.forged) return CREDENTIAL_HEADERS[c.actor](forgedCredential(c.actor));
  if (c.role !== undefined) {
    const byRole = target.credentials.participant_role;
    if (!byRole) throw new Error(`${c.id}: no credential factory for a participant in a role`);
    return CREDENTIAL_HEADERS.participant(await byRole(c.role));
  }
  const factory = target.credentials[c.actor];
  if (!factory) throw new Error(`${c.id}: no credential factory for ${c.actor}`);
  const scopes = c.lacking !== undefined ? target.allScopes.filter((s) => s !== c.lacking) : target.allScopes;
  const credential =
    c.actor === 'api_key' ? await factory(scopes) : await (factory as () => Promise<string>)();
  return CREDENTIAL_HEADERS[c.actor](credential);
}

/** The path of a case, its parameters filled from the callers' workspace or, where the case says, the other one. */
export function pathOf(c: AccessCase, target: Pick<MatrixTarget, 'params' | 'foreignParams'>): string {
  const home = target.params();
  const foreign = c.foreign.length > 0 ? target.foreignParams() : {};
  for (const param of c.foreign) {
    if (foreign[param] === undefined)
      throw new Error(`${c.id}: no resource of another workspace for {${param}}`);
  }
  if (c.check === 'foreign_id') {
    // The rest of the path must name real resources of the callers' own workspace, or a 404 proves nothing.
    const unset = c.operation.pathParams.filter((p) => !c.foreign.includes(p) && home[p] === undefined);
    if (unset.length > 0) throw new Error(`${c.id}: no resource of the callers' workspace for {${unset[0]}}`);
  }
  return c.operation.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent((c.foreign.includes(name) ? foreign[name] : home[name]) ?? SAMPLE_ID),
  );
}

function answered(c: AccessCase, status: number): boolean {
  return status !== 401 && status !== 403 && c.operation.responses.includes(String(status));
}

/**
 * Sends one case to the service and returns the answer expected (the contract's, or a listed deviation's)
 * beside the answer given. A 404 whose code ends in `_not_found` is reported as `RESOURCE_NOT_FOUND` (and a
 * refusal that carries `data` never is: it would be a leak); a documented answer other than 401/403 is reported
 * as `ANSWERED` where that is expected.
 */
export async function checkAccessCase(
  c: AccessCase,
  target: MatrixTarget,
  deviations: Record<string, KnownDeviation> = {},
): Promise<{ expected: Answer; actual: Answer }> {
  const headers = { 'content-type': 'application/json', ...(await credentialFor(c, target)) };
  const send = target.fetch ?? fetch;
  const res = await send(`${target.url()}${pathOf(c, target)}`, {
    method: c.operation.method.toUpperCase(),
    headers,
    body: ['post', 'put', 'patch'].includes(c.operation.method)
      ? JSON.stringify(
          ((c.check === 'foreign_id' || c.check === 'role_missing') &&
            target.bodies?.[c.operation.operationId]) ||
            {},
        )
      : undefined,
  });
  const body = (await res.json().catch(() => ({}))) as { code?: unknown; data?: unknown };
  const code = typeof body.code === 'string' ? body.code : '';
  const notFound =
    c.expected.code === RESOURCE_NOT_FOUND &&
    res.status === 404 &&
    /^[a-z_]+_not_found$/.test(code) &&
    body.data === undefined;
  const actual =
    c.expected === ANSWERED && answered(c, res.status)
      ? ANSWERED
      : { status: res.status, code: notFound ? RESOURCE_NOT_FOUND : code };
  const expected = deviations[c.id]?.actual ?? c.expected;
  if (actual.status === expected.status && actual.code === expected.code) target.coverage?.record(c.id);
  return { expected, actual };
}

/** The test name of a case: a listed deviation says so, with the answer given today. */
export function caseTitle(c: AccessCase, deviations: Record<string, KnownDeviation> = {}): string {
  const deviation = deviations[c.id];
  return deviation
    ? `${c.name} [KNOWN DEVIATION: answers ${deviation.actual.status} ${deviation.actual.code}; ${deviation.reason}]`
    : c.name;
}
