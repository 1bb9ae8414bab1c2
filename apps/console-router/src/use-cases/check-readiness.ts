import { httpCheck } from '@svc/service-kit';
import type { ReadinessCheck } from '@svc/service-kit';

/**
 * The console router's readiness checks: the hub's JWKS answers 200 with a non-empty `keys` array within
 * the timeout, since without a key no agent token can be verified.
 */
export function consoleRouterReadinessChecks(options: {
  hubUrl: string;
  hubTimeoutMs: number;
}): Record<string, ReadinessCheck> {
  return {
    hub_jwks: httpCheck({
      url: `${options.hubUrl.replace(/\/+$/, '')}/.well-known/jwks.json`,
      target: 'hub',
      timeoutMs: options.hubTimeoutMs,
      inspect(body) {
        const keys = (body as { keys?: unknown } | null)?.keys;
        if (!Array.isArray(keys)) throw new Error('hub JWKS has no keys array');
        if (keys.length === 0) throw new Error('hub JWKS has no keys');
      },
    }),
  };
}
