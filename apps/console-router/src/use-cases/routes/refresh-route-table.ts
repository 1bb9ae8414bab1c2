import { AppError } from '@svc/service-kit/http';
import { RouteTableUnavailableError } from '../../data/route-table.source';
import type { RouteTableSource, RouteTableState } from '../../data/route-table.source';

/**
 * Reloads the route table from the hub now (`svc start` / `svc stop` on the host call it, so a new agent is
 * routable at once). A hub that does not answer leaves the last good table in place: 503 `hub_unavailable`.
 */
export interface RefreshDeps {
  routes: Pick<RouteTableSource, 'refresh' | 'state'>;
}

export async function refreshRouteTable(deps: RefreshDeps): Promise<RouteTableState> {
  try {
    await deps.routes.refresh();
  } catch (error) {
    if (!(error instanceof RouteTableUnavailableError)) throw error;
    throw new AppError({
      status: 503,
      code: 'hub_unavailable',
      detail: `The route table could not be reloaded (${error.message}); the last good table stays in use.`,
      headers: { 'Retry-After': '5' },
      cause: error,
    });
  }
  return deps.routes.state();
}
