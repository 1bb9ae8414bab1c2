/**
 * Errors thrown by the SDK. Every failure is an {@link SvcError}; an answer from the API is an {@link APIError}
 * subclass chosen by its HTTP status (and its `code`), carrying `status`, `code`, `request_id` and `details`.
 */
import type { Blocker, Invocation, Problem } from './types.js';

/** The base class of every error the SDK throws. */
export class SvcError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** One field-level failure of a request (`errors` of the problem). */
export type ProblemDetail = NonNullable<Problem['errors']>[number];

function isProblem(value: unknown): value is Problem {
  return (
    typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string'
  );
}

/** A problem's `type` as an absolute URL (it is relative to the request); `about:blank` and junk give undefined. */
function docsUrlOf(type: string | undefined, requestUrl: string | undefined): string | undefined {
  if (!type || type.startsWith('about:')) return undefined;
  try {
    const url = requestUrl ? new URL(type, requestUrl) : new URL(type);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** A non-success answer of the API (problem+json). Branch on `code`, never on the message. */
export class APIError extends SvcError {
  /** The HTTP status. */
  readonly status: number;
  /** The problem's stable snake_case code (`http_<status>` when the answer carried no problem). */
  readonly code: string;
  /** The server's request id, to quote when asking for support. */
  readonly request_id: string | undefined;
  /** Field-level failures (`errors` of the problem), empty when there are none. */
  readonly details: ProblemDetail[];
  /** The full problem+json body, when there was one. */
  readonly problem: Problem | undefined;
  readonly headers: Headers;
  /**
   * The page that explains the problem's code and its fix: the problem's `type` resolved against the URL of
   * the request (`<service>/docs/errors/<code>`); undefined when the answer carried no such reference.
   */
  readonly docs_url: string | undefined;

  constructor(
    status: number,
    problem: Problem | undefined,
    headers: Headers,
    fallback?: string,
    requestUrl?: string,
  ) {
    super(problem?.detail ?? problem?.title ?? fallback ?? `request failed with HTTP ${status}`);
    this.status = status;
    this.code = problem?.code ?? `http_${status}`;
    this.request_id = problem?.request_id ?? headers.get('x-request-id') ?? undefined;
    this.details = problem?.errors ?? [];
    this.problem = problem;
    this.headers = headers;
    this.docs_url = docsUrlOf(problem?.type, requestUrl);
  }

  /** Same as `request_id`. */
  get requestId(): string | undefined {
    return this.request_id;
  }

  /** Typed preflight blockers, for `launch_blocked` (and any problem that carries `blockers`). */
  get blockers(): Blocker[] {
    const blockers = (this.problem as { blockers?: unknown } | undefined)?.blockers;
    return Array.isArray(blockers) ? (blockers as Blocker[]) : [];
  }

  /** The right subclass for a status and problem. */
  static from(
    status: number,
    body: unknown,
    headers: Headers,
    statusText?: string,
    requestUrl?: string,
  ): APIError {
    const problem = isProblem(body) ? body : undefined;
    const code = problem?.code ?? '';
    const args = [status, problem, headers, statusText, requestUrl] as const;
    if (status === 400 || status === 422) return new ValidationError(...args);
    if (status === 401) return new AuthenticationError(...args);
    if (status === 403) return new PermissionDeniedError(...args);
    if (status === 404) return new NotFoundError(...args);
    if (status === 409 && code.startsWith('idempotency')) return new IdempotencyError(...args);
    if (status === 409) return new ConflictError(...args);
    if (status === 429) return new RateLimitError(...args);
    if (status >= 500) return new InternalServerError(...args);
    return new APIError(...args);
  }
}

/** 400 or 422: the request is malformed or does not validate; `details` lists each field. */
export class ValidationError extends APIError {}
/** 401: the API key or token is missing, unknown, revoked or expired. */
export class AuthenticationError extends APIError {}
/** 403: the credential lacks a scope or role (`problem.missing_scopes`). */
export class PermissionDeniedError extends APIError {}
/** 404: the resource does not exist or is not visible to the credential. */
export class NotFoundError extends APIError {}
/** 409: the request conflicts with the resource's state (e.g. `launch_blocked`, whose `blockers` say why). */
export class ConflictError extends APIError {}
/** 409 `idempotency_*`: the idempotency key was used for a different request, or that request is in progress. */
export class IdempotencyError extends ConflictError {}
/** 429: too many requests; retried automatically for safe requests, then thrown. */
export class RateLimitError extends APIError {
  /** The wait the server asked for (`Retry-After`), in milliseconds, when it gave one. */
  get retryAfterMs(): number | undefined {
    return parseRetryAfter(this.headers.get('retry-after'));
  }
}
/** 5xx: the server failed; retried automatically for safe requests, then thrown. */
export class InternalServerError extends APIError {}

/** The request never got an answer (DNS, refused connection, reset). */
export class APIConnectionError extends SvcError {
  constructor(message = 'connection error', options?: { cause?: unknown }) {
    super(message, options);
  }
}
/** The request got no complete answer within the client's timeout. */
export class APITimeoutError extends APIConnectionError {
  constructor(timeoutMs: number) {
    super(`request timed out after ${timeoutMs} ms`);
  }
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

export type RunAttention = 'blocked' | 'approval_required' | 'artifact_rejected';

/** `workflow.run` stopped because the run needs attention the caller did not say it would wait for. */
export class RunAttentionError extends SvcError {
  readonly attention: RunAttention;
  readonly invocation: Invocation;
  constructor(invocation: Invocation, attention: RunAttention) {
    super(
      `invocation ${invocation.invocation_id} needs attention (${attention})${invocation.attention_reason ? `: ${invocation.attention_reason}` : ''}`,
    );
    this.attention = attention;
    this.invocation = invocation;
  }
}

/** `workflow.run` saw the invocation end as `failed` or `cancelled` without an artifact. */
export class RunFailedError extends SvcError {
  readonly invocation: Invocation;
  readonly state: Invocation['state'];
  readonly failure: Invocation['failure'];
  constructor(invocation: Invocation) {
    super(
      `invocation ${invocation.invocation_id} ended ${invocation.state}${invocation.failure ? ` (${invocation.failure.reason})` : ''}`,
    );
    this.invocation = invocation;
    this.state = invocation.state;
    this.failure = invocation.failure;
  }
}

/** `workflow.run` found no contract matching the intent. */
export class NoRouteError extends SvcError {
  readonly intent: string;
  constructor(intent: string) {
    super('no active contract matches the intent');
    this.intent = intent;
  }
}

/** A wait (`workflow.run`, `invocations.waitForArtifact`, `agent.waitForStage`) reached the caller's timeout. */
export class WaitTimeoutError extends SvcError {
  readonly timeoutMs: number;
  /** The last invocation read, for waits on an invocation. */
  readonly lastInvocation: Invocation | undefined;
  constructor(timeoutMs: number, what: string, lastInvocation?: Invocation) {
    super(
      `${what} not done after ${timeoutMs} ms${lastInvocation ? ` (last state ${lastInvocation.state}, attention ${lastInvocation.attention})` : ''}`,
    );
    this.timeoutMs = timeoutMs;
    this.lastInvocation = lastInvocation;
  }
}

export type EnvelopeVerificationCode =
  | 'envelope_malformed'
  | 'envelope_identity_mismatch'
  | 'envelope_schema_unsupported'
  | 'envelope_payload_tampered';

/** An artifact envelope that must not be trusted; `code` says why, `field` names the field concerned. */
export class EnvelopeVerificationError extends SvcError {
  readonly code: EnvelopeVerificationCode;
  readonly field: string | undefined;
  constructor(code: EnvelopeVerificationCode, message: string, field?: string) {
    super(message);
    this.code = code;
    this.field = field;
  }
}
