/**
 * The HTTP transport under every client: credentials, `User-Agent`, a per-attempt timeout, and retries with
 * exponential backoff and jitter on network errors, 429 (honouring `Retry-After`) and 5xx — only for requests
 * that are safe to repeat: reads (GET, HEAD), and POSTs that carry an `Idempotency-Key`. Creating an
 * invocation always carries one: the caller's, or one generated here and reused by every retry.
 */
import { APITimeoutError, ArgumentError, connectionErrorOf, parseRetryAfter } from './errors.js';
import { VERSION } from './generated/version.js';
import { CALL_RETRIES_HEADER, CALL_TIMEOUT_HEADER, sleep } from './request.js';
import { randomId } from './web-crypto.js';

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
const MAX_RETRY_AFTER_MS = 60_000;

export type FetchLike = (input: Request) => Promise<Response>;

export interface ClientOptions {
  /** The service's base URL, e.g. `https://workflow.example.com`. */
  baseUrl: string;
  /** Workspace API key (`svc_…`), sent as `X-API-Key`. Server-side only: never ship it to a browser. */
  apiKey?: string;
  /** Bearer token (an agent's `AGENT_TOKEN`, or a participant JWT), or a function returning the current one. */
  token?: string | (() => string | Promise<string>);
  /** Per-attempt timeout in milliseconds, covering the whole answer (default 60 000). */
  timeoutMs?: number;
  /** Retries of a safe request after the first attempt (default 2; 0 disables retries). */
  maxRetries?: number;
  /** A fetch implementation (defaults to the global one). */
  fetch?: FetchLike;
  /** Extra headers sent with every request. */
  defaultHeaders?: Record<string, string>;
  /**
   * Credentials are refused in a browser, where any visitor could read them. Set only when the page itself
   * is trusted (an internal tool behind authentication) and you accept that risk.
   */
  dangerouslyAllowBrowser?: boolean;
}

export const USER_AGENT = `svc-sdk-js/${VERSION}`;

function isBrowser(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== 'undefined' && typeof g.document !== 'undefined';
}

/** Exponential backoff with jitter: 500 ms, 1 s, 2 s … (at most 8 s), each reduced by up to a quarter at random. */
export function backoffDelay(retry: number): number {
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retry);
  return Math.round(ceiling * (1 - Math.random() * 0.25));
}

/** Invoke and retry: keyed writes (a key is generated when the caller gives none, and reused by retries). */
const INVOCATION_CREATE = /\/api\/v1\/projects\/[^/]+\/workflow\/invocations(\/[^/]+\/retry)?\/?$/;
/**
 * Writes the server makes idempotent by themselves: a launch of a launched invocation only re-checks it, a
 * cancel of a cancelled one answers it unchanged, and the same artifact published twice is a replay.
 */
const IDEMPOTENT_WRITES =
  /\/api\/v1\/projects\/[^/]+\/workflow\/invocations\/[^/]+\/(launch|cancel|artifact)\/?$/;

function isSafeToRepeat(method: string, headers: Headers, path: string): boolean {
  if (method === 'GET' || method === 'HEAD') return true;
  if (method !== 'POST') return false;
  if (INVOCATION_CREATE.test(path)) return headers.has('idempotency-key');
  return IDEMPOTENT_WRITES.test(path);
}

/** A call's own timeout or retries (see `RequestOptions`), read from its private header and removed. */
function callOption(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null) return undefined;
  headers.delete(name);
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

function shouldRetry(status: number): boolean {
  return status === 429 || status >= 500;
}

const NO_BODY = new Set([101, 204, 205, 304]);

export interface Transport {
  fetch: FetchLike;
  baseUrl: string;
}

/** The fetch that openapi-fetch is given: every request of a client goes through it. */
export function createTransport(options: ClientOptions): Transport {
  if (typeof options !== 'object' || options === null) {
    throw new ArgumentError(
      'argument_invalid',
      'options',
      'the client needs its options: at least { baseUrl } and a credential (apiKey or token)',
    );
  }
  if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new ArgumentError(
      'argument_invalid',
      'baseUrl',
      options.baseUrl === undefined || options.baseUrl === ''
        ? 'baseUrl is required: the http(s) URL of the service, e.g. https://workflow.example.com'
        : `baseUrl must be an http(s) URL, got ${JSON.stringify(String(options.baseUrl).slice(0, 80))}`,
    );
  }
  if ((options.apiKey || options.token) && isBrowser() && !options.dangerouslyAllowBrowser) {
    throw new ArgumentError(
      'argument_invalid',
      'dangerouslyAllowBrowser',
      'API keys and tokens must not be used in a browser: call the API from your server instead ' +
        '(or set dangerouslyAllowBrowser if you accept the risk)',
    );
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  if (!(timeoutMs > 0)) {
    throw new ArgumentError('argument_invalid', 'timeoutMs', 'timeoutMs must be a positive number');
  }
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new ArgumentError('argument_invalid', 'maxRetries', 'maxRetries must be an integer, 0 or more');
  }
  const fetchImpl: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request));

  async function send(input: Request): Promise<Response> {
    const headers = new Headers(input.headers);
    for (const [name, value] of Object.entries(options.defaultHeaders ?? {})) {
      if (!headers.has(name)) headers.set(name, value);
    }
    headers.set('user-agent', USER_AGENT);
    headers.set('x-svc-client', USER_AGENT);
    if (options.apiKey) headers.set('x-api-key', options.apiKey);
    if (options.token) {
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      headers.set('authorization', `Bearer ${token}`);
    }
    const method = input.method.toUpperCase();
    if (
      method === 'POST' &&
      !headers.has('idempotency-key') &&
      INVOCATION_CREATE.test(new URL(input.url).pathname)
    ) {
      headers.set('idempotency-key', randomId());
    }
    const body = input.body ? await input.arrayBuffer() : undefined;
    const callerSignal = input.signal;
    const url = new URL(input.url);
    const callTimeout = callOption(headers, CALL_TIMEOUT_HEADER);
    const callRetries = callOption(headers, CALL_RETRIES_HEADER);
    const attemptMs = callTimeout !== undefined && callTimeout > 0 ? callTimeout : timeoutMs;
    const allowed = callRetries !== undefined && callRetries >= 0 ? Math.floor(callRetries) : maxRetries;
    const retries = isSafeToRepeat(method, headers, url.pathname) ? allowed : 0;

    for (let attempt = 0; ; attempt += 1) {
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new APITimeoutError(attemptMs, url.host));
      }, attemptMs);
      const onAbort = () => controller.abort(callerSignal?.reason);
      if (callerSignal?.aborted) onAbort();
      else callerSignal?.addEventListener('abort', onAbort, { once: true });
      let response: Response;
      try {
        const answer = await fetchImpl(
          new Request(input.url, { method, headers, body: body ?? null, signal: controller.signal }),
        );
        // The whole answer is read within the timeout (answers are small JSON documents).
        const bytes = NO_BODY.has(answer.status) ? null : await answer.arrayBuffer();
        response = new Response(bytes, {
          status: answer.status,
          statusText: answer.statusText,
          headers: answer.headers,
        });
        // Keep the URL that answered: a problem's relative `type` resolves against it (APIError.docs_url).
        Object.defineProperty(response, 'url', { value: answer.url || input.url });
      } catch (error) {
        if (callerSignal?.aborted) throw callerSignal.reason;
        const failure = timedOut
          ? new APITimeoutError(attemptMs, url.host)
          : connectionErrorOf(error, input.url);
        if (attempt >= retries) throw failure;
        await sleep(backoffDelay(attempt), callerSignal ?? undefined);
        continue;
      } finally {
        clearTimeout(timer);
        callerSignal?.removeEventListener('abort', onAbort);
      }
      if (attempt >= retries || !shouldRetry(response.status)) return response;
      const asked = parseRetryAfter(response.headers.get('retry-after'));
      const delay = asked !== undefined ? Math.min(asked, MAX_RETRY_AFTER_MS) : backoffDelay(attempt);
      await sleep(delay, callerSignal ?? undefined);
    }
  }

  return { fetch: send, baseUrl: options.baseUrl.replace(/\/+$/, '') };
}
