import { ApiError } from '@svc/contracts';
import { scrubSecrets } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';

/**
 * What to do after a failed call about a stage:
 * - `drop`: the stage is not ours any more (403 `stage_not_owned`, 409 `stage_reassigned`, gone, done);
 * - `retry`: a network failure, a timeout, 401/408/429 or a 5xx — try again after a backoff;
 * - `fail`: the platform refused what we sent; retrying the same call cannot help.
 */
export type Disposition = 'drop' | 'retry' | 'fail';

const DROP_CODES = new Set([
  'stage_reassigned',
  'stage_not_owned',
  'stage_completed',
  'stage_not_found',
  'invocation_terminal',
]);
const RETRY_STATUSES = new Set([401, 408, 425, 429]);

export function classifyError(error: unknown): Disposition {
  if (error instanceof ApiError) {
    if (DROP_CODES.has(error.code) || error.status === 404) return 'drop';
    if (error.status >= 500 || RETRY_STATUSES.has(error.status)) return 'retry';
    return 'fail';
  }
  return 'retry';
}

export interface RetryPolicy {
  /** First backoff (default 500 ms); it doubles per attempt up to `maxDelayMs`. */
  initialDelayMs: number;
  /** Backoff cap (default 30 s). */
  maxDelayMs: number;
  /** Bound on one request, long polls excepted (default 30 s). */
  requestTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  requestTimeoutMs: 30_000,
};

/** Capped exponential backoff with ±20 % jitter, so restarted agents do not retry in lockstep. */
export function backoffDelay(attempt: number, policy: RetryPolicy): number {
  const exponential = policy.initialDelayMs * 2 ** Math.max(0, Math.min(attempt - 1, 30));
  const capped = Math.min(exponential, policy.maxDelayMs);
  return Math.round(capped * (0.8 + Math.random() * 0.4));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `call` with a signal that aborts when `parent` does or after `timeoutMs` (a `TimeoutError`), and
 * detaches from `parent` afterwards, so a long-lived parent does not collect one listener per request.
 */
export async function within<T>(
  parent: AbortSignal,
  timeoutMs: number,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new DOMException(`the request took longer than ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  try {
    return await call(controller.signal);
  } finally {
    clearTimeout(timer);
    parent.removeEventListener('abort', onAbort);
  }
}

/** The parts of an error that are safe to log: message (scrubbed), HTTP status, problem or system code. */
export function describeError(error: unknown, secrets: string[] = []): Record<string, unknown> {
  const scrub = (text: string) => {
    let out = text;
    for (const secret of secrets) if (secret) out = out.split(secret).join('[REDACTED]');
    return scrubSecrets(out);
  };
  if (error instanceof ApiError) {
    return { status: error.status, code: error.code, message: scrub(error.message) };
  }
  // Duck-typed: errors from fetch may come from another realm (a test VM), where `instanceof Error` fails.
  if (typeof error === 'object' && error !== null && typeof (error as Error).message === 'string') {
    const { name, message } = error as Error;
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const code = typeof cause?.code === 'string' ? cause.code : undefined;
    return {
      ...(typeof name === 'string' ? { name } : {}),
      message: scrub(message),
      ...(code ? { code } : {}),
      ...(!code && typeof cause?.message === 'string' ? { cause: scrub(cause.message) } : {}),
    };
  }
  return { message: scrub(String(error)) };
}

/**
 * Runs one platform call, retrying `retry`-class failures with capped backoff until it succeeds, fails for
 * good, or `signal` aborts (then it rejects with the signal's reason). Each attempt has its own timeout.
 */
export async function withRetry<T>(
  step: string,
  call: (signal: AbortSignal) => Promise<T>,
  options: { signal: AbortSignal; policy: RetryPolicy; logger: Logger; secrets?: string[] },
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await within(options.signal, options.policy.requestTimeoutMs, call);
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      if (classifyError(error) !== 'retry') throw error;
      const delayMs = backoffDelay(attempt, options.policy);
      options.logger.warn(
        { step, attempt, retry_in_ms: delayMs, error: describeError(error, options.secrets) },
        'platform call failed; retrying',
      );
      await sleep(delayMs, options.signal);
    }
  }
}
