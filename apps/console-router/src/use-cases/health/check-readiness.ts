import { httpCheck } from '@svc/service-kit/http';
import type { ReadinessCheck } from '@svc/service-kit/http';
import type { RouteTableSource } from '../../data/route-table.source';

/**
 * The console router's readiness checks, each named in `/readyz`:
 *
 * - `hub_jwks`: the hub's JWKS answers 200 with a non-empty `keys` array within the timeout (without a key no
 *   credential can be verified);
 * - `route_table`: the host's settings are present and the hub serves its route table now (a failure names
 *   the cause; the last good table keeps routing meanwhile);
 * - `upstream_secret`: the router has the console secret agents' proxy keys come from.
 */
export function consoleRouterReadinessChecks(options: {
  hubUrl: string;
  hubTimeoutMs: number;
  routes: Pick<RouteTableSource, 'refresh'>;
  hasUpstreamSecret: boolean;
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
    route_table: async () => {
      await options.routes.refresh();
    },
    upstream_secret: () =>
      options.hasUpstreamSecret
        ? Promise.resolve()
        : Promise.reject(new Error('CONSOLE_ROUTER_UPSTREAM_SECRET is not set')),
  };
}
