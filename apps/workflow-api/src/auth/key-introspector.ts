import { createHash } from 'node:crypto';
import { parseApiKey } from '@svc/auth';
import type { ApiKeyActor } from '@svc/auth';
import type { HubInternalClient } from '@svc/contracts';
import { AppError } from '@svc/service-kit';

/** Callers may cache an introspection answer for at most 30 s (the hub also says so per answer). */
export const MAX_INTROSPECTION_CACHE_MS = 30_000;
/** Unknown or revoked keys are remembered briefly, so a flood of bad keys does not reach the hub. */
export const NEGATIVE_CACHE_MS = 5_000;

interface Entry {
  actor: ApiKeyActor | null;
  expiresAt: number;
}

export interface KeyIntrospector {
  /** The actor behind a presented workspace API key, or null when the hub calls it inactive. */
  introspect(rawKey: string): Promise<ApiKeyActor | null>;
  /** Forget one key at once (e.g. after this service learns it was revoked). */
  forget(rawKey: string): void;
  /** Forget every cached answer for the key with this id (the hub announced its revocation). */
  forgetKeyId(keyId: string): void;
}

/**
 * Verifies workspace API keys through the hub's internal introspection, caching each answer for the time the
 * hub allows (never more than 30 s). Concurrent lookups of one key share one call; the raw key is never used
 * as a map key (its SHA-256 is). A value that is not in the API-key format is inactive without a call. A hub
 * that does not answer is a 503, not a 401.
 */
export function createKeyIntrospector(options: {
  hub: HubInternalClient;
  now?: () => number;
  maxEntries?: number;
}): KeyIntrospector {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 10_000;
  const cache = new Map<string, Entry>();
  const inflight = new Map<string, Promise<ApiKeyActor | null>>();
  const digest = (raw: string) => createHash('sha256').update(raw).digest('hex');

  async function lookup(raw: string, id: string): Promise<ApiKeyActor | null> {
    let result;
    try {
      result = await options.hub.POST('/internal/v1/api-keys/introspect', {
        body: { key: raw },
        signal: AbortSignal.timeout(5_000),
      });
    } catch (error) {
      throw new AppError({
        status: 503,
        code: 'hub_unavailable',
        detail: 'Credentials cannot be checked right now; try again shortly.',
        cause: error,
      });
    }
    if (!result.data) {
      throw new AppError({
        status: 503,
        code: 'hub_unavailable',
        detail: 'Credentials cannot be checked right now; try again shortly.',
        message: `introspection answered HTTP ${result.response.status}`,
      });
    }
    const answer = result.data.data;
    const actor: ApiKeyActor | null =
      answer.active && answer.key_id && answer.workspace_id
        ? {
            kind: 'api_key',
            keyId: answer.key_id,
            workspaceId: answer.workspace_id,
            scopes: answer.scopes ?? [],
            prefix: answer.prefix ?? '',
          }
        : null;
    const ttl = actor
      ? Math.min(answer.cache_ttl_seconds * 1000, MAX_INTROSPECTION_CACHE_MS)
      : NEGATIVE_CACHE_MS;
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(id, { actor, expiresAt: now() + ttl });
    return actor;
  }

  return {
    async introspect(raw) {
      // A value that is not an API key at all (a JWT in the key header, a truncated key) is no live key: it is
      // refused here, without asking the hub, which would refuse it as a malformed request (a 503 here).
      if (parseApiKey(raw) === null) return null;
      const id = digest(raw);
      const hit = cache.get(id);
      if (hit && hit.expiresAt > now()) return hit.actor;
      cache.delete(id);
      const pending = inflight.get(id) ?? lookup(raw, id).finally(() => inflight.delete(id));
      inflight.set(id, pending);
      return pending;
    },
    forget(raw) {
      cache.delete(digest(raw));
    },
    forgetKeyId(keyId) {
      for (const [id, entry] of cache) if (entry.actor?.keyId === keyId) cache.delete(id);
    },
  };
}
