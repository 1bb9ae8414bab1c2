import type { Actor } from '@svc/auth';
import { activeTeamAssignments } from '../../data/peer-messaging.policy';
import { findRuntimeHostFor } from '../../data/runtime-hosts.lookups';
import type { HubDeps } from '../../deps';
import { defaultConsoleRoute } from '../../domain/agent-placement';
import { peersByAgent } from '../../domain/peer-rule';
import type { Agent, RuntimeHost, Workspace } from '../../generated/prisma/client';

/** One agent the host's console router serves, with who else may reach it. */
export interface ConsoleRouteEntry {
  agent: Pick<Agent, 'id' | 'name' | 'status'> & { servePort: number };
  /** `/<workspace-slug>/agents/<agent-id>`. */
  route: string;
  /** Other agents of the workspace that may reach this one under the peer rule (sorted ids). */
  peers: string[];
}

export interface ConsoleRouteTableRows {
  host: RuntimeHost;
  workspace: Pick<Workspace, 'id' | 'slug'>;
  /** Participant ids of the workspace's members (sorted). */
  members: string[];
  /** Sorted by route. */
  routes: ConsoleRouteEntry[];
}

/**
 * What one runtime host's console router needs: every agent of the workspace placed on this host with a
 * serve port and not evicted (stopped and offline agents included, so the router can tell "not listening"
 * from "unknown"), each with its peers, and the workspace's members. A host of another workspace (or a
 * missing one) is not found; a runtime bundle id is refused.
 *
 * A bounded number of queries whatever the size of the workspace: the host, then the workspace, its agents
 * with their teams and its members at once, then the active project assignments of those teams.
 */
export async function getConsoleRouteTable(
  deps: Pick<HubDeps, 'db'>,
  actor: Actor | undefined,
  hostId: string,
): Promise<ConsoleRouteTableRows> {
  const host = await findRuntimeHostFor(deps.db, actor, hostId);
  const workspaceId = host.workspaceId;
  const [workspace, agents, memberships] = await Promise.all([
    deps.db.workspace.findUniqueOrThrow({ where: { id: workspaceId }, select: { id: true, slug: true } }),
    // Evicted agents are neither routed nor peers: the router learns of an eviction from this table.
    deps.db.agent.findMany({
      where: { workspaceId, status: { not: 'evicted' } },
      select: {
        id: true,
        name: true,
        status: true,
        servePort: true,
        runtimeInstanceId: true,
        projectId: true,
        teams: { select: { teamId: true } },
      },
    }),
    deps.db.membership.findMany({
      where: { workspaceId },
      select: { participantId: true },
      orderBy: { participantId: 'asc' },
    }),
  ]);
  const ruleAgents = agents.map((a) => ({
    id: a.id,
    projectId: a.projectId,
    teamIds: a.teams.map((t) => t.teamId),
  }));
  const assignments = await activeTeamAssignments(
    deps.db,
    workspaceId,
    ruleAgents.flatMap((a) => a.teamIds),
  );
  const peers = peersByAgent(ruleAgents, assignments);

  const routes: ConsoleRouteEntry[] = [];
  for (const agent of agents) {
    if (agent.runtimeInstanceId !== host.id || agent.servePort === null) continue;
    routes.push({
      agent: { id: agent.id, name: agent.name, status: agent.status, servePort: agent.servePort },
      // Registration stores this route unless the agent named a path of its own, and slugs never change; the
      // router serves `/<workspace>/agents/<agent-id>` only, so that is the route whatever was stored.
      route: defaultConsoleRoute(workspace.slug, agent.id),
      peers: peers.get(agent.id) ?? [],
    });
  }
  routes.sort((a, b) => (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
  return { host, workspace, members: memberships.map((m) => m.participantId), routes };
}
