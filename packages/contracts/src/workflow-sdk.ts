/**
 * Thin typed helpers over the generated Workflow API client: the idempotency and correlation headers become
 * named options, results are unwrapped from `{ data }`, and any non-success answer throws {@link ApiError}
 * (clients must treat every non-success status as failure). Consuming a result is
 * {@link waitForArtifact} (bounded polling) followed by {@link verifyEnvelope}.
 */
import { createHash } from 'node:crypto';
import { ApiError, unwrap } from './api-error';
import type { WorkflowClient } from './clients';
import type { components } from './generated/workflow';

export type WorkflowInvocation = components['schemas']['InvocationsInvocation'];
export type WorkflowInvokeBody = components['schemas']['InvocationsCreateRequest'];
export type WorkflowPreflightBody = components['schemas']['InvocationsPreflightRequest'];
export type WorkflowPreflight = components['schemas']['InvocationsPreflight'];
export type WorkflowInvocationState = components['schemas']['InvocationsState'];
export type WorkflowBlocker = components['schemas']['InvocationsBlocker'];
export type WorkflowApprovalDecision = components['schemas']['RunsApprovalRequest']['decision'];
export type WorkflowArtifactEnvelope = components['schemas']['ArtifactEnvelope'];
export type WorkflowArtifactPublishBody = components['schemas']['ArtifactPublishRequest'];

export interface InvokeOptions {
  projectId: string;
  /** A stable key per logical request (1–255 printable ASCII); reuse it when retrying the same request. */
  idempotencyKey: string;
  /** Sent as `X-Correlation-ID` and stored with the invocation. */
  correlationId?: string;
  body: WorkflowInvokeBody;
  signal?: AbortSignal;
}

export interface InvokeResult {
  invocation: WorkflowInvocation;
  /** True when the key was already used for this same request and the original invocation came back. */
  replayed: boolean;
}

/**
 * Invoke: creates one invocation, or returns the original one for a retried request with the same key
 * (`replayed: true`). A key reused for a different request throws `ApiError` with code `idempotency_conflict`.
 */
export async function invoke(client: WorkflowClient, options: InvokeOptions): Promise<InvokeResult> {
  const result = await client.POST('/api/v1/projects/{projectId}/workflow/invocations', {
    params: {
      path: { projectId: options.projectId },
      header: {
        'Idempotency-Key': options.idempotencyKey,
        ...(options.correlationId !== undefined ? { 'X-Correlation-ID': options.correlationId } : {}),
      },
    },
    body: options.body,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const invocation = unwrap(result);
  return {
    invocation,
    replayed: result.response.status === 200 && result.response.headers.get('idempotent-replayed') === 'true',
  };
}

/** Reads an invocation's lifecycle (state, route, stages, latest handoff, attention). */
export async function getWorkflowInvocation(
  client: WorkflowClient,
  options: { projectId: string; invocationId: string; signal?: AbortSignal },
): Promise<WorkflowInvocation> {
  return unwrap(
    await client.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
      params: { path: { projectId: options.projectId, invocationId: options.invocationId } },
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

/** Preflight: read-only launch readiness of an intent (`route_ready`, `can_launch`, typed blockers). */
export async function preflightWorkflow(
  client: WorkflowClient,
  options: { projectId: string; body: WorkflowPreflightBody; signal?: AbortSignal },
): Promise<WorkflowPreflight> {
  return unwrap(
    await client.POST('/api/v1/projects/{projectId}/workflow/preflight', {
      params: { path: { projectId: options.projectId } },
      body: options.body,
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

interface InvocationTarget {
  projectId: string;
  invocationId: string;
  signal?: AbortSignal;
}

function invocationPath(options: InvocationTarget) {
  return { path: { projectId: options.projectId, invocationId: options.invocationId } };
}

/**
 * Launch: starts (or reconciles) the governed run and returns the invocation (`launching`, or its current
 * state; a terminal one comes back unchanged). A route that is not ready throws `ApiError` with code
 * `launch_blocked`, whose `problem.blockers` lists why (same shape as preflight's).
 */
export async function launchInvocation(
  client: WorkflowClient,
  options: InvocationTarget,
): Promise<WorkflowInvocation> {
  return unwrap(
    await client.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/launch', {
      params: invocationPath(options),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

/**
 * Approves or rejects a run held by the `human_approval_required` guardrail. Needs a client built with a
 * participant token (owner or admin); `reject` ends the invocation as `cancelled`.
 */
export async function decideApproval(
  client: WorkflowClient,
  options: InvocationTarget & { decision: WorkflowApprovalDecision; comment?: string },
): Promise<WorkflowInvocation> {
  return unwrap(
    await client.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/approval', {
      params: invocationPath(options),
      body: {
        decision: options.decision,
        ...(options.comment !== undefined ? { comment: options.comment } : {}),
      },
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

/**
 * The artifact envelope of an invocation. Throws `ApiError` with code `artifact_not_found` (404) until a valid
 * artifact is published. Check what comes back with {@link verifyEnvelope} before trusting it.
 */
export async function getInvocationArtifact(
  client: WorkflowClient,
  options: InvocationTarget,
): Promise<WorkflowArtifactEnvelope> {
  return unwrap(
    await client.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact', {
      params: invocationPath(options),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

export interface PublishArtifactResult {
  envelope: WorkflowArtifactEnvelope;
  /** True when this same payload was published before and the original envelope came back. */
  replayed: boolean;
}

/**
 * Publishes the result of an invocation. A payload that does not match the pinned schema version throws
 * `ApiError` 422 `artifact_schema_mismatch` (with `problem.errors`); a different payload after publication
 * throws 409 `artifact_already_published`.
 */
export async function publishArtifact(
  client: WorkflowClient,
  options: InvocationTarget & WorkflowArtifactPublishBody,
): Promise<PublishArtifactResult> {
  const body: WorkflowArtifactPublishBody = {
    payload: options.payload,
    ...(options.summary !== undefined ? { summary: options.summary } : {}),
    ...(options.limitations !== undefined ? { limitations: options.limitations } : {}),
    ...(options.provenance !== undefined ? { provenance: options.provenance } : {}),
  };
  const result = await client.POST(
    '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
    {
      params: invocationPath(options),
      body,
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  const envelope = unwrap(result);
  return { envelope, replayed: result.response.status === 200 };
}

export interface WaitForArtifactOptions {
  projectId: string;
  invocationId: string;
  /** The most this call may take, in milliseconds (required: the caller decides how long a result may take). */
  timeoutMs: number;
  /** Delay before the second poll (default 250 ms); each later delay is 1.5 times the previous one. */
  intervalMs?: number;
  /** The longest delay between polls (default 2000 ms, or `intervalMs` when that is larger). */
  maxIntervalMs?: number;
  signal?: AbortSignal;
  /** Called with the first invocation read and again whenever its state, attention or `updated_at` changes. */
  onState?: (invocation: WorkflowInvocation) => void;
}

export interface WaitForArtifactResult {
  invocation: WorkflowInvocation;
  envelope: WorkflowArtifactEnvelope;
}

function describeAttention(invocation: WorkflowInvocation): string {
  return invocation.attention_reason
    ? `attention ${invocation.attention}: ${invocation.attention_reason}`
    : `attention ${invocation.attention}`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** {@link waitForArtifact} ran out of time; `lastInvocation` is the last state read (if any was). */
export class WaitForArtifactTimeoutError extends Error {
  readonly timeoutMs: number;
  readonly invocationId: string;
  readonly lastInvocation: WorkflowInvocation | undefined;
  /** The error of the last poll when it failed (a network error or a 5xx), else undefined. */
  readonly lastError: unknown;

  constructor(options: {
    timeoutMs: number;
    invocationId: string;
    lastInvocation: WorkflowInvocation | undefined;
    lastError: unknown;
  }) {
    const last = options.lastInvocation
      ? `last state ${options.lastInvocation.state} (${describeAttention(options.lastInvocation)})`
      : 'the invocation could not be read';
    const failure = options.lastError !== undefined ? `; last error: ${errorMessage(options.lastError)}` : '';
    super(`no artifact after ${options.timeoutMs} ms; ${last}${failure}`);
    this.name = 'WaitForArtifactTimeoutError';
    this.timeoutMs = options.timeoutMs;
    this.invocationId = options.invocationId;
    this.lastInvocation = options.lastInvocation;
    this.lastError = options.lastError;
  }
}

/** {@link waitForArtifact} saw the invocation end (`failed` or `cancelled`) without an artifact. */
export class InvocationTerminalError extends Error {
  readonly invocation: WorkflowInvocation;
  readonly state: WorkflowInvocationState;

  constructor(invocation: WorkflowInvocation) {
    super(
      `invocation ${invocation.invocation_id} ended in state ${invocation.state} (${describeAttention(invocation)}) without an artifact`,
    );
    this.name = 'InvocationTerminalError';
    this.invocation = invocation;
    this.state = invocation.state;
  }
}

const TERMINAL_WITHOUT_ARTIFACT: ReadonlySet<WorkflowInvocationState> = new Set(['failed', 'cancelled']);
const DEFAULT_INTERVAL_MS = 250;
const DEFAULT_MAX_INTERVAL_MS = 2000;
const BACKOFF_FACTOR = 1.5;

/** Worth polling again: the network failed (fetch rejects with a TypeError), or the server is busy or down. */
function isTransient(error: unknown): boolean {
  if (error instanceof ApiError) return error.status >= 500 || error.status === 408 || error.status === 429;
  return error instanceof TypeError;
}

function isArtifactPending(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && error.code === 'artifact_not_found';
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A signal that aborts when the caller's does, or when `ms` have passed (so no request outlives the wait). */
function boundedSignal(outer: AbortSignal | undefined, ms: number) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new Error('wait deadline reached')), ms);
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

function requirePositive(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${name} must be a positive number of milliseconds`);
  }
}

/**
 * Bounded polling for an invocation's result. Resolves with the invocation and its envelope once the
 * invocation is `completed` with an `artifact`. `failed` and `cancelled` throw {@link InvocationTerminalError}
 * at once; every other state, `waiting_for_artifact` included (a run that ended without its artifact is not
 * success), keeps polling until `timeoutMs`, then {@link WaitForArtifactTimeoutError} names the last state
 * seen. Network errors, 5xx, 408 and 429 are polled through; any other non-success answer throws its
 * `ApiError`. Aborting `signal` rejects with its reason. The envelope is returned as the server sent it:
 * check it with {@link verifyEnvelope}.
 */
export async function waitForArtifact(
  client: WorkflowClient,
  options: WaitForArtifactOptions,
): Promise<WaitForArtifactResult> {
  const { projectId, invocationId, timeoutMs, signal } = options;
  if (typeof timeoutMs !== 'number') throw new RangeError('timeoutMs is required');
  requirePositive('timeoutMs', timeoutMs);
  requirePositive('intervalMs', options.intervalMs);
  requirePositive('maxIntervalMs', options.maxIntervalMs);
  const firstDelay = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const maxDelay = Math.max(firstDelay, options.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS);
  const deadline = Date.now() + timeoutMs;

  let lastInvocation: WorkflowInvocation | undefined;
  let lastError: unknown;
  let lastSeen: string | undefined;
  const timedOut = () =>
    new WaitForArtifactTimeoutError({ timeoutMs, invocationId, lastInvocation, lastError });

  /** One bounded request: its value, or `undefined` when it failed in a way worth polling through. */
  async function attempt<T>(
    call: (signal: AbortSignal) => Promise<T>,
    keepPolling: (error: unknown) => boolean,
  ): Promise<T | undefined> {
    const bounded = boundedSignal(signal, deadline - Date.now());
    try {
      const value = await call(bounded.signal);
      lastError = undefined;
      return value;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (bounded.signal.aborted) throw timedOut();
      if (!keepPolling(error)) throw error;
      lastError = error;
      return undefined;
    } finally {
      bounded.dispose();
    }
  }

  let delay = firstDelay;
  for (;;) {
    signal?.throwIfAborted();
    if (Date.now() >= deadline) throw timedOut();

    const invocation = await attempt(
      (bounded) => getWorkflowInvocation(client, { projectId, invocationId, signal: bounded }),
      isTransient,
    );
    if (invocation) {
      lastInvocation = invocation;
      const seen = `${invocation.state}|${invocation.attention}|${invocation.updated_at}`;
      if (seen !== lastSeen) {
        lastSeen = seen;
        options.onState?.(invocation);
      }
      if (TERMINAL_WITHOUT_ARTIFACT.has(invocation.state)) throw new InvocationTerminalError(invocation);
      if (invocation.state === 'completed' && invocation.artifact) {
        const envelope = await attempt(
          (bounded) => getInvocationArtifact(client, { projectId, invocationId, signal: bounded }),
          (error) => isTransient(error) || isArtifactPending(error),
        );
        if (envelope) return { invocation, envelope };
      }
    }

    const remaining = deadline - Date.now();
    if (remaining <= 0) throw timedOut();
    await sleep(Math.min(delay, remaining), signal);
    delay = Math.min(maxDelay, delay * BACKOFF_FACTOR);
  }
}

export type EnvelopeVerificationCode =
  | 'envelope_malformed'
  | 'envelope_identity_mismatch'
  | 'envelope_schema_unsupported'
  | 'envelope_payload_tampered';

/** An artifact envelope that must not be trusted; `code` says why and `field` names the field concerned. */
export class EnvelopeVerificationError extends Error {
  readonly code: EnvelopeVerificationCode;
  readonly field: string | undefined;

  constructor(code: EnvelopeVerificationCode, message: string, field?: string) {
    super(message);
    this.name = 'EnvelopeVerificationError';
    this.code = code;
    this.field = field;
  }
}

export interface ExpectedEnvelope {
  projectId: string;
  invocationId: string;
  workspaceId?: string;
  runId?: string;
  artifactId?: string;
  /** The schema the consumer understands: its name and the versions it supports. */
  schema?: { name: string; versions: string[] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/**
 * JSON with object keys sorted at every depth (arrays keep their order, `undefined` members are left out):
 * the rule the server hashes payloads with.
 */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const IDENTITY_FIELDS = [
  'artifact_id',
  'workspace_id',
  'project_id',
  'invocation_id',
  'run_id',
  'payload_sha256',
  'created_at',
] as const;

function malformed(message: string, field?: string): EnvelopeVerificationError {
  return new EnvelopeVerificationError('envelope_malformed', message, field);
}

function checkShape(envelope: unknown): asserts envelope is WorkflowArtifactEnvelope {
  if (!isRecord(envelope)) throw malformed('artifact envelope is not an object');
  if (envelope.envelope_version !== '1') {
    throw malformed('artifact envelope_version is not "1"', 'envelope_version');
  }
  for (const field of IDENTITY_FIELDS) {
    if (!isNonEmptyString(envelope[field])) throw malformed(`artifact envelope lacks ${field}`, field);
  }
  if (!/^[0-9a-f]{64}$/i.test(envelope.payload_sha256 as string)) {
    throw malformed('payload_sha256 is not a hex SHA-256 digest', 'payload_sha256');
  }
  const schema = envelope.schema;
  if (!isRecord(schema)) throw malformed('artifact envelope lacks schema', 'schema');
  for (const field of ['schema_id', 'name', 'version'] as const) {
    if (!isNonEmptyString(schema[field])) {
      throw malformed(`artifact envelope lacks schema.${field}`, `schema.${field}`);
    }
  }
  if (!Number.isInteger(envelope.version) || (envelope.version as number) < 1) {
    throw malformed('artifact envelope lacks a positive integer version', 'version');
  }
  const createdBy = envelope.created_by;
  if (!isRecord(createdBy) || !isNonEmptyString(createdBy.kind)) {
    throw malformed('artifact envelope lacks created_by', 'created_by');
  }
  if (!('payload' in envelope) || envelope.payload === undefined) {
    throw malformed('artifact envelope lacks payload', 'payload');
  }
}

/**
 * Checks an artifact envelope before it is trusted and returns it typed: its shape and identities
 * (`envelope_malformed`), that it belongs to what was asked for (`envelope_identity_mismatch`), that its
 * schema is one the consumer supports (`envelope_schema_unsupported`) and that the payload still hashes to
 * `payload_sha256` (`envelope_payload_tampered`). Unknown extra fields are accepted.
 */
export function verifyEnvelope(envelope: unknown, expected: ExpectedEnvelope): WorkflowArtifactEnvelope {
  checkShape(envelope);
  const identities: [keyof WorkflowArtifactEnvelope & string, string | undefined][] = [
    ['project_id', expected.projectId],
    ['invocation_id', expected.invocationId],
    ['workspace_id', expected.workspaceId],
    ['run_id', expected.runId],
    ['artifact_id', expected.artifactId],
  ];
  for (const [field, want] of identities) {
    if (want !== undefined && envelope[field] !== want) {
      throw new EnvelopeVerificationError(
        'envelope_identity_mismatch',
        `artifact envelope ${field} is ${String(envelope[field])}, expected ${want}`,
        field,
      );
    }
  }
  if (expected.schema) {
    if (envelope.schema.name !== expected.schema.name) {
      throw new EnvelopeVerificationError(
        'envelope_schema_unsupported',
        `artifact schema ${envelope.schema.name} is not ${expected.schema.name}`,
        'schema.name',
      );
    }
    if (!expected.schema.versions.includes(envelope.schema.version)) {
      throw new EnvelopeVerificationError(
        'envelope_schema_unsupported',
        `artifact schema ${envelope.schema.name} version ${envelope.schema.version} is not supported (supported: ${expected.schema.versions.join(', ') || 'none'})`,
        'schema.version',
      );
    }
  }
  const digest = createHash('sha256').update(canonicalJson(envelope.payload)).digest('hex');
  if (digest !== envelope.payload_sha256.toLowerCase()) {
    throw new EnvelopeVerificationError(
      'envelope_payload_tampered',
      'artifact payload does not match payload_sha256',
      'payload_sha256',
    );
  }
  return envelope;
}
