import type { Db } from '../db';
import { matchesRunningFilter, runningAgentFilter } from '../domain/host-readiness';
import { AVAILABLE_STATUSES, compareRosterEntries } from '../domain/roster';
import type { RosterEntry } from '../domain/roster';
import type { Prisma } from '../generated/prisma/client';
import type { InternalProject } from './projects.lookups';

export interface RosterFilters {
  /** The agent must hold every one of these capabilities. */
  capabilities?: readonly string[];
  /** Only running agents that are online or idle (free to take work). */
  availableOnly?: boolean;
}

/**
 * The agents that can work on a project: members of the teams actively assigned to it (not unassigned)
 * and agents whose own project it is, each once, never evicted ones. Only the project's workspace is
 * looked at, whatever rows point elsewhere.
 */
export async function readProjectRoster(
  db: Db,
  now: Date,
  project: InternalProject,
  filters: RosterFilters = {},
): Promise<RosterEntry[]> {
  const assignments = await db.projectTeam.findMany({
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

  const agents = await db.agent.findMany({
    where: { AND: and },
    select: {
      id: true,
      name: true,
      status: true,
      capabilities: true,
      runtimeInstanceId: true,
      lastHeartbeatAt: true,
      // With no team assigned there is no membership to read (and no statement to send for it).
      teams: teamIds.length > 0 ? { where: { teamId: { in: teamIds } }, select: { teamId: true } } : false,
    },
  });
  if (agents.length === 0) return [];

  // "Running" is decided by the same rule the Networks view counts with (its filter, applied to the rows
  // just read), so the two never disagree. With `availableOnly` the query above already applied it.
  const running = new Set(
    agents.filter((a) => filters.availableOnly || matchesRunningFilter(a, now)).map((a) => a.id),
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
      teamIds: (agent.teams ?? []).map((t) => t.teamId).sort(),
    }))
    .sort(compareRosterEntries);
}
