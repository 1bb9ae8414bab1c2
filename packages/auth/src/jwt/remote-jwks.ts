import { JwksUnavailableError } from './errors';
import { createJwksDocument, isPublicJwk } from './keys';
import type { GetJwks, JwksDocument } from './keys';

/** A JWKS source for keys held in-process (the hub verifying its own tokens, tests). */
export function createStaticJwks(doc: JwksDocument): GetJwks {
  const copy = createJwksDocument(doc.keys);
  return () => Promise.resolve(copy);
}

export interface RemoteJwksOptions {
  url: string;
  fetch?: typeof fetch;
  /** How long a fetched document is used without refetching; default 300 000 ms. */
  cacheTtlMs?: number;
  /** Minimum time between two fetches triggered by forced refreshes or failures; default 10 000 ms. */
  minRefreshIntervalMs?: number;
  /**
   * After the cache expires, how long the last good document may still be served when a refetch fails;
   * default 3 600 000 ms. 0 disables (a failed refetch then throws `JwksUnavailableError`).
   */
  staleIfErrorMs?: number;
  /** Per-request timeout; default 5 000 ms. */
  timeoutMs?: number;
  /** Clock in milliseconds; defaults to `Date.now`. */
  now?: () => number;
}

/**
 * A cached `getJwks` over HTTP.
 *
 * - A fresh cached document is returned without a request; concurrent callers share one request.
 * - `forceRefresh` (an unknown kid) refetches, but at most once per `minRefreshIntervalMs`, so tokens
 *   with random kids cannot turn into a request flood against the hub.
 * - Failures are remembered for `minRefreshIntervalMs` as well. Within `staleIfErrorMs` after expiry the
 *   last good document keeps being served; otherwise `JwksUnavailableError` is thrown.
 * - Keys that are not ES256 P-256 signing keys are ignored.
 */
export function createRemoteJwks(options: RemoteJwksOptions): GetJwks {
  const fetchImpl = options.fetch ?? fetch;
  const cacheTtlMs = options.cacheTtlMs ?? 300_000;
  const minRefreshIntervalMs = options.minRefreshIntervalMs ?? 10_000;
  const staleIfErrorMs = options.staleIfErrorMs ?? 3_600_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const now = options.now ?? Date.now;
  const url = new URL(options.url).toString();

  let cached: { doc: JwksDocument; fetchedAt: number } | null = null;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let lastError: JwksUnavailableError | null = null;
  let inflight: Promise<JwksDocument> | null = null;

  async function download(): Promise<JwksDocument> {
    let response: Response;
    try {
      response = await fetchImpl(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new JwksUnavailableError('JWKS request failed', { cause: error });
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new JwksUnavailableError(`JWKS request returned HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new JwksUnavailableError('JWKS response is not JSON', { cause: error });
    }
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) {
      throw new JwksUnavailableError('JWKS response has no keys array');
    }
    const usable = keys.filter(isPublicJwk);
    const unique = usable.filter(
      (key, index) => usable.findIndex((other) => other.kid === key.kid) === index,
    );
    return createJwksDocument(unique);
  }

  function refresh(): Promise<JwksDocument> {
    lastAttemptAt = now();
    inflight = download()
      .then(
        (doc) => {
          cached = { doc, fetchedAt: now() };
          lastError = null;
          return doc;
        },
        (error: unknown) => {
          lastError =
            error instanceof JwksUnavailableError
              ? error
              : new JwksUnavailableError('JWKS request failed', { cause: error });
          return fallback();
        },
      )
      .finally(() => {
        inflight = null;
      });
    return inflight;
  }

  /** The cached document if it is still usable after a failure, else the failure. */
  function fallback(): JwksDocument {
    if (cached && now() - cached.fetchedAt < cacheTtlMs + staleIfErrorMs) {
      return cached.doc;
    }
    throw lastError ?? new JwksUnavailableError('JWKS unavailable');
  }

  return async ({ forceRefresh }) => {
    if (inflight) {
      return inflight;
    }
    const t = now();
    const fresh = cached !== null && t - cached.fetchedAt < cacheTtlMs;
    if (cached && fresh && !forceRefresh) {
      return cached.doc;
    }
    if (t - lastAttemptAt < minRefreshIntervalMs) {
      // A refetch happened recently: serve what we have (for a forced refresh the unknown kid stays
      // unknown), or repeat the recent failure instead of hammering the hub.
      if (cached && (fresh || lastError === null)) {
        return cached.doc;
      }
      return fallback();
    }
    return refresh();
  };
}
