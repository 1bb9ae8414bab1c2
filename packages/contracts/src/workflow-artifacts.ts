/**
 * Consuming a result: reading and publishing an invocation's artifact, and {@link waitForArtifact} (bounded
 * polling), to be followed by `verifyEnvelope` before the envelope is trusted.
 */
import { ApiError, unwrap } from './api-error';
import type { WorkflowClient } from './clients';
import { getWorkflowInvocation } from './workflow-invoke';
import type {
  WorkflowArtifactEnvelope,
  WorkflowArtifactPublishBody,
  WorkflowInvocation,
  WorkflowInvocationState,
} from './workflow-invoke';
import { invocationPath } from './workflow-target';
import type { InvocationTarget } from './workflow-target';

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
