import type { ConsoleRouterApi } from '@svc/contracts';
import type { RouteTableState } from '../data/route-table.source';
import type { RouterStatus } from '../use-cases/status/describe-status';

type Schemas = ConsoleRouterApi.components['schemas'];
export type ConsoleRouterStatusBody = Schemas['ConsoleRouterStatus'];
export type RouteTableSummaryBody = Schemas['ConsoleRouteTableSummary'];

export function presentTableSummary(state: RouteTableState): RouteTableSummaryBody {
  return {
    version: state.table?.version ?? null,
    routes: state.table?.routes.length ?? 0,
    loaded_at: state.loadedAt?.toISOString() ?? null,
  };
}

export function presentStatus(status: RouterStatus): ConsoleRouterStatusBody {
  return {
    pid: status.pid,
    host: status.host,
    port: status.port,
    runtime_version: status.runtimeVersion,
    started_at: status.startedAt.toISOString(),
    uptime_seconds: Math.max(0, Math.round((status.now.getTime() - status.startedAt.getTime()) / 1000)),
    table: presentTableSummary(status.table),
    upstream_connections: {
      http: status.upstreamConnections.http,
      websockets: status.upstreamConnections.websockets,
    },
    websockets: {
      open: status.websockets.open,
      callers: status.websockets.callers,
      busiest_caller: status.websockets.busiestCaller,
      limits: {
        max_connections: status.websockets.limits.maxConnections,
        max_per_route: status.websockets.limits.maxPerRoute,
        max_per_caller: status.websockets.limits.maxPerCaller,
        max_message_bytes: status.websockets.limits.maxMessageBytes,
      },
      refused: { ...status.websockets.refused },
    },
    routes: status.routes.map((r) => ({
      agent_id: r.route.agentId,
      route: r.route.route,
      serve_port: r.route.servePort,
      running: r.route.running,
      open_sockets: r.openSockets,
      last_activity_at: r.lastActivityAt?.toISOString() ?? null,
    })),
  };
}
