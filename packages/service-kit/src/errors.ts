import { STATUS_CODES } from 'node:http';

/** Field-level validation failure, as listed in a problem's `errors`. */
export interface FieldError {
  location: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  request_id?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export interface AppErrorOptions {
  status: number;
  /** Stable snake_case code clients branch on. */
  code: string;
  /** Safe, public explanation. Never include secrets or internals. */
  detail?: string;
  /** Internal message for logs; defaults to detail. */
  message?: string;
  /** Extra public problem members (e.g. `missing_scopes`, `blockers`). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** The one error type use-cases throw. The error middleware turns it into problem+json. */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string | undefined;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(options: AppErrorOptions) {
    super(options.message ?? options.detail ?? options.code, { cause: options.cause });
    this.name = 'AppError';
    this.status = options.status;
    this.code = options.code;
    this.detail = options.detail;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

export const badRequest = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new AppError({ status: 400, code, detail, extra });
export const unauthorized = (code: string, detail: string) => new AppError({ status: 401, code, detail });
export const forbidden = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new AppError({ status: 403, code, detail, extra });
export const notFound = (code: string, detail: string) => new AppError({ status: 404, code, detail });
export const conflict = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new AppError({ status: 409, code, detail, extra });
export const unavailable = (code: string, detail: string) => new AppError({ status: 503, code, detail });
/**
 * The hub's signing keys (JWKS) cannot be read: a 503 with `Retry-After`, never a verdict on the credential
 * (a service that verifies tokens locally answers this while the hub is unreachable and it has no keys yet).
 */
export const jwksUnavailable = (cause?: unknown) =>
  new AppError({
    status: 503,
    code: 'jwks_unavailable',
    detail: "The hub's signing keys cannot be read right now; retry shortly.",
    headers: { 'Retry-After': '5' },
    cause,
  });

interface ExposedHttpError {
  status: number;
  code: string;
  detail?: string;
  expose?: boolean;
  missing?: string[];
}

/** A stable public code: snake_case, as the Problem schema requires. */
const PUBLIC_CODE = /^[a-z][a-z0-9_]*$/;

/** Errors of other layers (the auth package) that carry their own public status and code. */
function isExposedHttpError(error: unknown): error is ExposedHttpError {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as Partial<ExposedHttpError>;
  return (
    typeof e.status === 'number' &&
    e.status >= 400 &&
    e.status < 500 &&
    typeof e.code === 'string' &&
    PUBLIC_CODE.test(e.code) &&
    e.expose === true
  );
}

const BODY_ENCODING_INVALID = {
  status: 400,
  code: 'body_encoding_invalid',
  detail: 'The request body could not be decoded with its Content-Encoding.',
};

/**
 * A compressed body that does not decode (zlib's `Z_DATA_ERROR`, brotli's `ERR__ERROR_FORMAT_…`): body-parser
 * passes the decoder's error on as a 400 that carries the decoder's own code.
 */
function isBodyDecodeError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { status?: unknown; code?: unknown; errno?: unknown; type?: unknown };
  return (
    e.status === 400 &&
    e.type === undefined &&
    typeof e.errno === 'number' &&
    typeof e.code === 'string' &&
    /^(Z_|ERR_)/.test(e.code)
  );
}

/** body-parser / raw-body failures, identified by their `type`. */
const BODY_ERRORS: Record<string, { status: number; code: string; detail: string }> = {
  'entity.parse.failed': {
    status: 400,
    code: 'malformed_json',
    detail: 'The request body is not valid JSON.',
  },
  'entity.too.large': {
    status: 413,
    code: 'payload_too_large',
    detail: 'The request body is larger than this endpoint accepts.',
  },
  'encoding.unsupported': {
    status: 415,
    code: 'unsupported_encoding',
    detail: 'The request body encoding is not supported.',
  },
  'charset.unsupported': {
    status: 415,
    code: 'unsupported_charset',
    detail: 'The request body charset is not supported; use UTF-8.',
  },
  'request.aborted': {
    status: 400,
    code: 'request_aborted',
    detail: 'The request body was not received completely.',
  },
  'request.size.invalid': {
    status: 400,
    code: 'request_size_invalid',
    detail: 'The request body length does not match Content-Length.',
  },
};

function problemTitle(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

export interface ProblemResponse {
  status: number;
  body: ProblemBody;
  headers: Record<string, string>;
  /** True when the failure is ours (5xx): log it with its stack. */
  internal: boolean;
}

/** Maps any thrown value to the problem+json answer. 5xx answers never carry internal details. */
export function toProblem(error: unknown, requestId?: string): ProblemResponse {
  const base = (status: number, code: string, detail?: string, extra: Record<string, unknown> = {}) => {
    const body: ProblemBody = {
      // Extra members never replace the standard ones (a resource's `status` must not hide the HTTP status).
      ...extra,
      // The code's page on the service that answered (`/docs/errors/<code>`, see docs.ts), relative to the request URL.
      type: `/docs/errors/${code}`,
      title: problemTitle(status),
      status,
      code,
      ...(detail ? { detail } : {}),
      ...(requestId ? { request_id: requestId } : {}),
    };
    return body;
  };

  if (error instanceof AppError) {
    const internal = error.status >= 500;
    return {
      status: error.status,
      body: base(error.status, error.code, error.detail, error.extra),
      headers: error.headers,
      internal,
    };
  }
  if (isBodyDecodeError(error)) {
    const known = BODY_ENCODING_INVALID;
    return {
      status: known.status,
      body: base(known.status, known.code, known.detail),
      headers: {},
      internal: false,
    };
  }
  if (error instanceof URIError && (error as { status?: unknown }).status === 400) {
    // The router could not percent-decode a path parameter: its bytes are not UTF-8 text.
    return {
      status: 400,
      body: base(400, 'text_invalid', 'A path parameter is not valid percent-encoded UTF-8 text.', {
        errors: [{ location: 'path', message: 'is not valid percent-encoded UTF-8' }],
      }),
      headers: {},
      internal: false,
    };
  }
  if (isExposedHttpError(error)) {
    const extra = error.missing && error.missing.length > 0 ? { missing_scopes: error.missing } : {};
    return {
      status: error.status,
      body: base(error.status, error.code, error.detail, extra),
      headers: {},
      internal: false,
    };
  }
  const bodyErrorType = (error as { type?: unknown } | null)?.type;
  if (typeof bodyErrorType === 'string' && BODY_ERRORS[bodyErrorType]) {
    const known = BODY_ERRORS[bodyErrorType];
    return {
      status: known.status,
      body: base(known.status, known.code, known.detail),
      headers: {},
      internal: false,
    };
  }
  if (isDatabaseUnavailable(error)) {
    return {
      status: 503,
      body: base(503, 'database_unavailable', 'The database is unreachable right now; retry shortly.'),
      headers: { 'Retry-After': '1' },
      internal: true,
    };
  }
  return {
    status: 500,
    body: base(
      500,
      'internal_error',
      'An unexpected error occurred. Quote the request id when reporting it.',
    ),
    headers: {},
    internal: true,
  };
}

/** Prisma's "cannot reach / lost the database" codes and PostgreSQL's connection-class SQLSTATEs. */
const DB_UNAVAILABLE_CODES = new Set([
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);
const DB_UNAVAILABLE_MESSAGES =
  /can't reach database server|server has closed the connection|connection terminated|not queryable|timeout exceeded when trying to connect|ECONNREFUSED|ECONNRESET/i;

/**
 * True for errors that mean the database could not be reached (down, restarting, pool exhausted): an outage, not
 * a bug, so clients get 503 and retry instead of a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && DB_UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && DB_UNAVAILABLE_MESSAGES.test(message)) return true;
    e = cause;
  }
  return false;
}
