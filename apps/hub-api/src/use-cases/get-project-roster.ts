import type { HubDeps } from '../deps';
import type { AgentStatus, Prisma } from '../generated/prisma/client';
import type { InternalProject } from './get-internal-project';
import { runningAgentFilter } from './host-readiness';

export interface RosterFilters {
  /** The agent must hold every one of these capabilities. */
  capabilities?: readonly string[];
  /** Only running agents that are online or idle (free to take work). */
  availableOnly?: boolean;
}

export interface RosterEntry {
  id: string;
  name: string;
  status: Exclude<AgentStatus, 'evicted'>;
  capabilities: string[];
  runtimeInstanceId: string | null;
  lastHeartbeatAt: Date | null;
  running: boolean;
  /** The project's active teams through which the agent is on the roster, sorted. */
  teamIds: string[];
}

/** Idle agents are the first choice for new work, then online, then busy ones; any other status last. */
const STATUS_RANK: Record<string, number> = { idle: 0, online: 1, busy: 2 };
const rank = (status: string) => STATUS_RANK[status] ?? 3;
const AVAILABLE_STATUSES: AgentStatus[] = ['online', 'idle'];

export function compareRosterEntries(a: RosterEntry, b: RosterEntry): number {
  return (
    rank(a.status) - rank(b.status) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * The agents that can work on a project: members of the teams actively assigned to it (not unassigned)
 * and agents whose own project it is, each once, never evicted ones. Only the project's workspace is
 * looked at, whatever rows point elsewhere.
 */
export async function getProjectRoster(
  deps: HubDeps,
  project: InternalProject,
  filters: RosterFilters = {},
): Promise<RosterEntry[]> {
  const now = deps.now();
  const assignments = await deps.db.projectTeam.findMany({
    where: { projectId: project.id, unassignedAt: null, team: { workspaceId: project.workspaceId } },
    select: { teamId: true },
  });
  const teamIds = assignments.map((a) => a.teamId);
  const capabilities = [...new Set(filters.capabilities ?? [])];

  const and: Prisma.AgentWhereInput[] = [
    { workspaceId: project.workspaceId, status: { not: 'evicted' } },
    {
      OR: [
        { projectId: project.id },
        ...(teamIds.length > 0 ? [{ teams: { some: { teamId: { in: teamIds } } } }] : []),
      ],
    },
  ];
  if (capabilities.length > 0) and.push({ capabilities: { hasEvery: capabilities } });
  if (filters.availableOnly) and.push(runningAgentFilter(now), { status: { in: AVAILABLE_STATUSES } });

  const agents = await deps.db.agent.findMany({
    where: { AND: and },
    select: {
      id: true,
      name: true,
      status: true,
      capabilities: true,
      runtimeInstanceId: true,
      lastHeartbeatAt: true,
      teams: { where: { teamId: { in: teamIds } }, select: { teamId: true } },
    },
  });
  if (agents.length === 0) return [];

  // "Running" is decided by the same filter the Networks view counts with, so the two never disagree.
  // With `availableOnly` the query above already applied that filter.
  const running = new Set(
    filters.availableOnly
      ? agents.map((a) => a.id)
      : (
          await deps.db.agent.findMany({
            where: { id: { in: agents.map((a) => a.id) }, ...runningAgentFilter(now) },
            select: { id: true },
          })
        ).map((a) => a.id),
  );

  return agents
    .map((agent): RosterEntry => ({
      id: agent.id,
      name: agent.name,
      status: agent.status as RosterEntry['status'],
      capabilities: agent.capabilities,
      runtimeInstanceId: agent.runtimeInstanceId,
      lastHeartbeatAt: agent.lastHeartbeatAt,
      running: running.has(agent.id),
      teamIds: agent.teams.map((t) => t.teamId).sort(),
    }))
    .sort(compareRosterEntries);
}
