import type { ConsoleRouterApi } from '@svc/contracts';
import type { OperationContext, OperationHandlers } from '@svc/service-kit/http';
import { AppError } from '@svc/service-kit/http';
import { isLoopbackAddress, isLoopbackHost } from '../domain/request-origin';
import { presentStatus, presentTableSummary } from '../presenters/status';
import { describeStatus } from '../use-cases/status/describe-status';
import type { StatusDeps } from '../use-cases/status/describe-status';
import { refreshRouteTable } from '../use-cases/routes/refresh-route-table';
import type { RefreshDeps } from '../use-cases/routes/refresh-route-table';

type StatusHandlers = Pick<
  OperationHandlers<ConsoleRouterApi.operations>,
  'consoleRouterStatus' | 'refreshConsoleRoutes'
>;

/** `/status` and `/routes/refresh` answer loopback callers addressing the router by a loopback name only. */
function requireLoopback(ctx: Pick<OperationContext, 'req'>): void {
  if (!isLoopbackAddress(ctx.req.socket.remoteAddress) || !isLoopbackHost(ctx.req.headers.host)) {
    throw new AppError({
      status: 403,
      code: 'host_not_allowed',
      detail: 'This endpoint answers callers on the host itself (loopback) only.',
    });
  }
}

/** `GET /status` (routes with their activity) and `POST /routes/refresh` (reload the table now). */
export function statusRoutes(deps: {
  routes: StatusDeps['routes'] & RefreshDeps['routes'];
  activity: StatusDeps['activity'];
  connections: StatusDeps['connections'];
  wsLimits: StatusDeps['wsLimits'];
  host: string;
  configuredPort: number;
  runtimeVersion: string;
  startedAt: Date;
  now: () => Date;
}): StatusHandlers {
  return {
    consoleRouterStatus: (ctx) => {
      requireLoopback(ctx);
      const status = describeStatus(deps, {
        host: deps.host,
        // The socket's local port is the port actually bound (the configured one may be 0).
        port: ctx.req.socket.localPort ?? deps.configuredPort,
        runtimeVersion: deps.runtimeVersion,
        startedAt: deps.startedAt,
        now: deps.now(),
      });
      return { status: 200, body: presentStatus(status) };
    },
    refreshConsoleRoutes: async (ctx) => {
      requireLoopback(ctx);
      return { status: 200, body: presentTableSummary(await refreshRouteTable(deps)) };
    },
  };
}
