import type { HubApi } from '@svc/contracts';

export type HubRouteTable = HubApi.components['schemas']['ConsoleRouteTable'];
export type HubRoute = HubApi.components['schemas']['ConsoleRoute'];

/**
 * One agent route of this host, with who may reach it. Kept small: a host may carry 10 000 routes, so a route
 * holds only what a request or `/status` reads (no name or status), and routes without peers share one empty set.
 */
export interface AgentRoute {
  agentId: string;
  /** `/<workspace-slug>/agents/<agent-id>`. */
  route: string;
  servePort: number;
  /** The agent is started (online, idle or busy); a stopped (`offline`) agent's route is not forwarded to. */
  running: boolean;
  /** Agents (besides the agent itself) whose own token may reach this console. */
  peers: ReadonlySet<string>;
}

const NO_PEERS: ReadonlySet<string> = new Set<string>();

/** A request path split on an agent route: `/<workspace>/agents/<agent-id>/<rest>`. */
export interface AgentPath {
  workspace: string;
  agentId: string;
  /** What the agent sees: the rest of the path with a leading `/` (at least `/`), query string kept. */
  rest: string;
}

/** A whole path segment as the route names it: percent-decoded, never `.`, `..` or holding a `/`. */
function decodeSegment(segment: string): string | undefined {
  if (segment.indexOf('%') === -1) return segment === '.' || segment === '..' ? undefined : segment;
  try {
    const decoded = decodeURIComponent(segment);
    return decoded.length > 0 && decoded.indexOf('/') === -1 && decoded !== '.' && decoded !== '..'
      ? decoded
      : undefined;
  } catch {
    return undefined;
  }
}

const AGENTS = '/agents/';

/**
 * Splits a request target on whole path segments: `/<workspace>/agents/<agent-id>` followed by nothing, `/…`
 * or `?…`. Anything else (another shape, `/acme/agents/a1x` being agent `a1x`, never `a1`) is not an agent
 * path or names another agent. Returns undefined for paths that are not agent routes at all. Runs on every
 * request, so it scans with `indexOf` rather than a regular expression.
 */
export function parseAgentPath(url: string): AgentPath | undefined {
  const queryAt = url.indexOf('?');
  const end = queryAt === -1 ? url.length : queryAt;
  if (url.charCodeAt(0) !== 47 /* / */) return undefined;
  const workspaceEnd = url.indexOf('/', 1);
  if (workspaceEnd <= 1 || workspaceEnd >= end || !url.startsWith(AGENTS, workspaceEnd)) return undefined;
  const agentStart = workspaceEnd + AGENTS.length;
  let agentEnd = url.indexOf('/', agentStart);
  if (agentEnd === -1 || agentEnd > end) agentEnd = end;
  if (agentEnd === agentStart) return undefined;
  const workspace = decodeSegment(url.slice(1, workspaceEnd));
  const agentId = decodeSegment(url.slice(agentStart, agentEnd));
  if (workspace === undefined || agentId === undefined) return undefined;
  const rest = agentEnd === end ? `/${url.slice(end)}` : url.slice(agentEnd);
  return { workspace, agentId, rest };
}

/**
 * The host's route table as the router uses it: O(1) look-up by (workspace slug or id, agent id), the
 * workspace's members, the hub's version.
 */
export class RouteTable {
  readonly version: string;
  readonly workspace: { id: string; slug: string };
  readonly routes: readonly AgentRoute[];
  private readonly members: ReadonlySet<string>;
  private readonly byAgent: ReadonlyMap<string, AgentRoute>;

  constructor(table: HubRouteTable) {
    this.version = table.version;
    this.workspace = { id: table.workspace.id, slug: table.workspace.slug };
    this.members = new Set(table.members);
    this.routes = table.routes.map((r) => ({
      agentId: r.agent_id,
      route: r.route,
      servePort: r.serve_port,
      running: r.status !== 'offline' && r.status !== 'evicted',
      peers: r.peers.length === 0 ? NO_PEERS : new Set(r.peers),
    }));
    this.byAgent = new Map(this.routes.map((r) => [r.agentId, r]));
  }

  /** The route of `agentId` when `workspace` is this table's workspace (by slug or id). */
  find(workspace: string, agentId: string): AgentRoute | undefined {
    if (workspace !== this.workspace.slug && workspace !== this.workspace.id) return undefined;
    return this.byAgent.get(agentId);
  }

  /** Serve ports of started agents: where the router may hold connections. */
  runningPorts(): Set<number> {
    const ports = new Set<number>();
    for (const route of this.routes) if (route.running) ports.add(route.servePort);
    return ports;
  }

  isMember(participantId: string): boolean {
    return this.members.has(participantId);
  }
}
