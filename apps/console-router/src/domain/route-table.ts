import type { HubApi } from '@svc/contracts';

export type HubRouteTable = HubApi.components['schemas']['ConsoleRouteTable'];
export type HubRoute = HubApi.components['schemas']['ConsoleRoute'];

/** One agent route of this host, with who may reach it. */
export interface AgentRoute {
  agentId: string;
  agentName: string;
  /** `/<workspace-slug>/agents/<agent-id>`. */
  route: string;
  servePort: number;
  status: HubRoute['status'];
  /** Agents (besides the agent itself) whose own token may reach this console. */
  peers: ReadonlySet<string>;
}

/** A request path split on an agent route: `/<workspace>/agents/<agent-id>/<rest>`. */
export interface AgentPath {
  workspace: string;
  agentId: string;
  /** What the agent sees: the rest of the path with a leading `/` (at least `/`), query string kept. */
  rest: string;
}

const SEGMENT = /^[^/]+$/;

function decodeSegment(segment: string): string | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return SEGMENT.test(decoded) && decoded !== '.' && decoded !== '..' ? decoded : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Splits a request target on whole path segments: `/<workspace>/agents/<agent-id>` followed by nothing, `/…`
 * or `?…`. Anything else (another shape, `/acme/agents/a1x` being agent `a1x`, never `a1`) is not an agent
 * path or names another agent. Returns undefined for paths that are not agent routes at all.
 */
export function parseAgentPath(url: string): AgentPath | undefined {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? '' : url.slice(queryAt);
  const match = /^\/([^/]+)\/agents\/([^/]+)(\/.*)?$/.exec(path);
  if (!match) return undefined;
  const workspace = decodeSegment(match[1]!);
  const agentId = decodeSegment(match[2]!);
  if (workspace === undefined || agentId === undefined) return undefined;
  return { workspace, agentId, rest: `${match[3] ?? '/'}${query}` };
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
      agentName: r.agent_name,
      route: r.route,
      servePort: r.serve_port,
      status: r.status,
      peers: new Set(r.peers),
    }));
    this.byAgent = new Map(this.routes.map((r) => [r.agentId, r]));
  }

  /** The route of `agentId` when `workspace` is this table's workspace (by slug or id). */
  find(workspace: string, agentId: string): AgentRoute | undefined {
    if (workspace !== this.workspace.slug && workspace !== this.workspace.id) return undefined;
    return this.byAgent.get(agentId);
  }

  isMember(participantId: string): boolean {
    return this.members.has(participantId);
  }
}
