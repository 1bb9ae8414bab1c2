import type { RouteTableState } from '../../data/route-table.source';
import type { AgentRoute } from '../../domain/route-table';
import type { RouteActivity } from '../../domain/route-activity';
import type { WebSocketLimit, WebSocketLimits, WebSocketLimitSettings } from '../../domain/websocket-limits';

export interface StatusFacts {
  host: string;
  port: number;
  runtimeVersion: string;
  startedAt: Date;
  now: Date;
}

export interface RouteStatus {
  route: AgentRoute;
  openSockets: number;
  lastActivityAt: Date | undefined;
}

export interface UpstreamConnections {
  /** Pooled keep-alive connections for plain HTTP, idle and busy. */
  http: number;
  /** Open WebSockets (one agent connection each). */
  websockets: number;
}

/** WebSockets against the limits: admitted now, callers holding them, the settings and refusals since start. */
export interface WebSocketUse {
  open: number;
  callers: number;
  busiestCaller: number;
  limits: WebSocketLimitSettings;
  refused: Record<WebSocketLimit, number>;
}

export interface RouterStatus extends StatusFacts {
  pid: number;
  table: RouteTableState;
  upstreamConnections: UpstreamConnections;
  websockets: WebSocketUse;
  routes: RouteStatus[];
}

/** The router's process facts, the table in use and each route's open WebSockets and last activity. */
export interface StatusDeps {
  routes: { state(): RouteTableState };
  activity: RouteActivity;
  /** The connections held to agents now. */
  connections: () => UpstreamConnections;
  wsLimits: WebSocketLimits;
}

export function describeStatus(deps: StatusDeps, facts: StatusFacts): RouterStatus {
  const table = deps.routes.state();
  return {
    ...facts,
    pid: process.pid,
    table,
    upstreamConnections: deps.connections(),
    websockets: {
      open: deps.wsLimits.open,
      callers: deps.wsLimits.callers,
      busiestCaller: deps.wsLimits.busiestCaller(),
      limits: deps.wsLimits.settings,
      refused: { ...deps.wsLimits.refused },
    },
    routes: (table.table?.routes ?? []).map((route) => ({
      route,
      openSockets: deps.activity.openSockets(route.agentId),
      lastActivityAt: deps.activity.lastActivity(route.agentId),
    })),
  };
}
