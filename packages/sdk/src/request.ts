/** Shared pieces of the resource methods: per-call options and turning an answer into data or an error. */
import { APIError } from './errors.js';

/** Options every resource method accepts. */
export interface RequestOptions {
  /** Aborts the call (the SDK rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Overrides the client's default project. */
  projectId?: string;
}

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

export function signalOf(options: RequestOptions | undefined): { signal?: AbortSignal } {
  return options?.signal ? { signal: options.signal } : {};
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

/** A signal aborted by the caller's signal or after `ms` (with `reason`), and its disposer. */
export function deadlineSignal(outer: AbortSignal | undefined, ms: number, reason: () => unknown) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(reason()), Math.max(0, ms));
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}
