/**
 * Errors thrown by the SDK. Every failure is an {@link SvcError}; an answer from the API is an {@link APIError}
 * subclass chosen by its HTTP status (and its `code`), carrying `status`, `code`, `request_id` and `details`.
 */
import type { ProblemCode } from './generated/problem-codes.js';
import type { Blocker, Invocation, Problem } from './types.js';

export type { ProblemCode };

/** The codes of failures found by the SDK itself (no answer, a wait that ended, a bad argument …). */
export type ClientErrorCode =
  | ConnectionErrorCode
  | ArgumentErrorCode
  | 'wait_timeout'
  | 'no_route'
  | 'run_blocked'
  | 'run_approval_required'
  | 'run_artifact_rejected'
  | 'run_failed'
  | 'run_cancelled';

/** The base class of every error the SDK throws; every one has a stable snake_case `code`. */
export class SvcError extends Error {
  /** A stable snake_case code: branch on it, never on the message. */
  readonly code: string;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = new.target.name;
    this.code = options?.code ?? 'sdk_error';
  }
}

export type ArgumentErrorCode = 'project_id_required' | 'workspace_id_required' | 'argument_invalid';

/**
 * A call the SDK refuses before sending anything: a missing project or workspace id, a base URL that is not
 * http(s), a timeout that is not positive … `argument` names the option.
 */
export class ArgumentError extends SvcError {
  declare readonly code: ArgumentErrorCode;
  readonly argument: string;
  constructor(code: ArgumentErrorCode, argument: string, message: string) {
    super(message, { code });
    this.argument = argument;
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
  /**
   * The problem's stable snake_case code, one of the contract's (`http_<status>` when the answer carried no
   * problem).
   */
  declare readonly code: ProblemCode | `http_${number}`;
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
    super(problem?.detail ?? problem?.title ?? fallback ?? `request failed with HTTP ${status}`, {
      code: problem?.code ?? `http_${status}`,
    });
    this.status = status;
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

export type ConnectionErrorCode =
  'connection_refused' | 'dns_failed' | 'connection_reset' | 'tls_failed' | 'timeout' | 'connection_failed';

/**
 * The request never got an answer: `code` says why (`connection_refused`, `dns_failed`, `connection_reset`,
 * `tls_failed`, `timeout`, or `connection_failed` for anything else) and `host` names where it was sent.
 */
export class APIConnectionError extends SvcError {
  declare readonly code: ConnectionErrorCode;
  /** The host (and port) the request was sent to. */
  readonly host: string | undefined;
  constructor(
    message = 'connection error',
    options?: { cause?: unknown; code?: ConnectionErrorCode; host?: string },
  ) {
    super(message, {
      code: options?.code ?? 'connection_failed',
      ...(options?.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.host = options?.host;
  }
}
/** The request got no complete answer within the client's timeout (`code` `timeout`). */
export class APITimeoutError extends APIConnectionError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, host?: string) {
    super(`request to ${host ?? 'the service'} timed out after ${timeoutMs} ms`, {
      code: 'timeout',
      ...(host !== undefined ? { host } : {}),
    });
    this.timeoutMs = timeoutMs;
  }
}

const SYSTEM_CODES: Record<string, ConnectionErrorCode> = {
  ECONNREFUSED: 'connection_refused',
  ENOTFOUND: 'dns_failed',
  EAI_AGAIN: 'dns_failed',
  EAI_NONAME: 'dns_failed',
  ECONNRESET: 'connection_reset',
  EPIPE: 'connection_reset',
  UND_ERR_SOCKET: 'connection_reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
};

/** The connection error for a failed fetch: the system error code found in its causes, and the host. */
export function connectionErrorOf(error: unknown, url: string): APIConnectionError {
  let host: string | undefined;
  try {
    host = new URL(url).host;
  } catch {
    host = undefined;
  }
  let code: ConnectionErrorCode = 'connection_failed';
  // Errors of another realm (a test runner's, a worker's) are not `instanceof Error`: read their message.
  const messageOf = (e: unknown) => {
    const message = (e as { message?: unknown } | null)?.message;
    return typeof message === 'string' ? message : undefined;
  };
  let reason = messageOf(error) ?? String(error);
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    // Without a system code, the inner messages say most ("fetch failed" hides e.g. "bad port").
    const inner = depth > 0 ? messageOf(e) : undefined;
    if (inner) reason = `${reason}: ${inner}`;
    const sys = (e as { code?: unknown }).code;
    if (typeof sys === 'string' && SYSTEM_CODES[sys]) {
      code = SYSTEM_CODES[sys];
      reason = sys;
      break;
    }
    if (typeof sys === 'string' && /^ERR_TLS|CERT|SSL/.test(sys)) {
      code = 'tls_failed';
      reason = sys;
      break;
    }
  }
  const what: Record<ConnectionErrorCode, string> = {
    connection_refused: 'connection refused by',
    dns_failed: 'DNS lookup failed for',
    connection_reset: 'connection reset by',
    tls_failed: 'TLS handshake failed with',
    timeout: 'connection timed out to',
    connection_failed: 'connection failed to',
  };
  return new APIConnectionError(`${what[code]} ${host ?? url} (${reason})`, {
    cause: error,
    code,
    ...(host !== undefined ? { host } : {}),
  });
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
  declare readonly code: 'run_blocked' | 'run_approval_required' | 'run_artifact_rejected';
  constructor(invocation: Invocation, attention: RunAttention) {
    super(
      `invocation ${invocation.invocation_id} needs attention (${attention})${invocation.attention_reason ? `: ${invocation.attention_reason}` : ''}`,
      { code: `run_${attention}` },
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
  declare readonly code: 'run_failed' | 'run_cancelled';
  constructor(invocation: Invocation) {
    super(
      `invocation ${invocation.invocation_id} ended ${invocation.state}${invocation.failure ? ` (${invocation.failure.reason})` : ''}`,
      { code: invocation.state === 'cancelled' ? 'run_cancelled' : 'run_failed' },
    );
    this.invocation = invocation;
    this.state = invocation.state;
    this.failure = invocation.failure;
  }
}

/** `workflow.run` found no contract matching the intent (`code` `no_route`). */
export class NoRouteError extends SvcError {
  declare readonly code: 'no_route';
  readonly intent: string;
  constructor(intent: string) {
    super('no active contract matches the intent', { code: 'no_route' });
    this.intent = intent;
  }
}

/** A wait (`workflow.run`, `invocations.waitForArtifact`, `agent.waitForStage`) reached the caller's timeout. */
export class WaitTimeoutError extends SvcError {
  readonly timeoutMs: number;
  /** The last invocation read, for waits on an invocation. */
  readonly lastInvocation: Invocation | undefined;
  declare readonly code: 'wait_timeout';
  constructor(timeoutMs: number, what: string, lastInvocation?: Invocation) {
    super(
      `${what} not done after ${timeoutMs} ms${lastInvocation ? ` (last state ${lastInvocation.state}, attention ${lastInvocation.attention})` : ''}`,
      { code: 'wait_timeout' },
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
  declare readonly code: EnvelopeVerificationCode;
  readonly field: string | undefined;
  constructor(code: EnvelopeVerificationCode, message: string, field?: string) {
    super(message, { code });
    this.field = field;
  }
}
