/** Shared pieces of the resource methods: per-call options and turning an answer into data or an error. */
import { APIError, ArgumentError } from './errors.js';

/** Options every resource method accepts. */
export interface RequestOptions {
  /** Aborts the call (the SDK rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Overrides the client's default project. */
  projectId?: string;
  /** This call's timeout per attempt, in milliseconds (overrides the client's `timeoutMs`). */
  timeoutMs?: number;
  /** This call's retries when it is safe to repeat (overrides the client's `maxRetries`; 0 disables them). */
  maxRetries?: number;
}

/** Headers that carry a call's own options to the transport, which removes them before sending. */
export const CALL_TIMEOUT_HEADER = 'x-svc-sdk-call-timeout-ms';
export const CALL_RETRIES_HEADER = 'x-svc-sdk-call-max-retries';

/**
 * The `data` of a successful answer (what resource methods return), or the {@link APIError} subclass of a
 * failure: also for answers of the raw path client, `unwrap(await workflow.raw.GET(…))`.
 */
export function unwrap<T>(result: { data?: { data: T }; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data.data;
  throw APIError.from(
    result.response.status,
    result.error,
    result.response.headers,
    result.response.statusText,
    result.response.url,
  );
}

/** Nothing for a success without a body (204), or the {@link APIError} subclass of a failure. */
export function expectOk(result: { error?: unknown; response: Response }): void {
  if (result.response.ok) return;
  throw APIError.from(
    result.response.status,
    result.error,
    result.response.headers,
    result.response.statusText,
    result.response.url,
  );
}

/** What a resource method hands to the path client for a call's options: its signal, timeout and retries. */
export function signalOf(options: RequestOptions | undefined): {
  signal?: AbortSignal;
  headers?: Record<string, string>;
} {
  const headers: Record<string, string> = {};
  if (options?.timeoutMs !== undefined) headers[CALL_TIMEOUT_HEADER] = String(options.timeoutMs);
  if (options?.maxRetries !== undefined) headers[CALL_RETRIES_HEADER] = String(options.maxRetries);
  return {
    ...(options?.signal ? { signal: options.signal } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
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

/** The longest delay a timer takes (a larger one, or Infinity, would fire at once). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A signal aborted by the caller's signal or after `ms` (with `reason`), and its disposer. `Infinity` never
 * times out; a delay beyond what one timer holds is re-armed until it is reached.
 */
export function deadlineSignal(outer: AbortSignal | undefined, ms: number, reason: () => unknown) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const at = Date.now() + Math.max(0, ms);
  const arm = () => {
    const left = at - Date.now();
    if (left <= 0) return controller.abort(reason());
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
  };
  if (Number.isFinite(ms)) arm();
  return {
    signal: controller.signal,
    dispose() {
      if (timer !== undefined) clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * An id of a path, refused before sending when it is empty or not a string: `…/invocations/` with no id is
 * another operation (the list), whose answer would pass for the one asked for; `…/workflow-stages//claim`
 * reaches no operation at all.
 */
export function idOf(value: unknown, name: string, example = 'inv_…'): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ArgumentError(
      'argument_invalid',
      name,
      `${name} is required: the id of the resource (e.g. ${example})`,
    );
  }
  return value;
}
