import type { Pool } from 'pg';
import type { Db } from '../db';
import {
  AGENT_HEARTBEAT_FRESH_SECONDS,
  RUNNING_AGENT_STATUSES,
  matchesRunningFilter,
  runningAgentFilter,
} from '../domain/host-readiness';
import { AVAILABLE_STATUSES, compareRosterEntries } from '../domain/roster';
import type { RosterEntry } from '../domain/roster';
import type { AgentStatus, Prisma } from '../generated/prisma/client';
import { projectNotFound } from './projects.lookups';
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

/**
 * {@link readProjectRoster} with its project, in ONE named prepared statement on the pool (decision 97): the
 * project and its workspace, the project's active teams and the roster agents with their memberships of those
 * teams. The rules are the same as the Prisma reads above (same filters, same running rule, same order, done
 * here in code so that no collation decides it); the project's row comes back with every agent row, or alone
 * (agent columns null) when the roster is empty. A missing project is 404 `project_not_found`.
 */
const READ_ROSTER = {
  name: 'hub_project_roster',
  text: `
    WITH project AS (
      SELECT p.id, p.workspace_id, p.code, p.name, p.created_at, p.archived_at, w.slug AS workspace_slug
      FROM projects p JOIN workspaces w ON w.id = p.workspace_id
      WHERE p.id = $1
    ),
    active_teams AS (
      SELECT pt.team_id
      FROM project_teams pt
      JOIN project ON project.id = pt.project_id
      JOIN teams t ON t.id = pt.team_id AND t.workspace_id = project.workspace_id
      WHERE pt.unassigned_at IS NULL
    )
    SELECT project.*, a.id AS agent_id, a.name AS agent_name, a.status::text AS agent_status, a.capabilities,
      a.runtime_instance_id, a.last_heartbeat_at,
      ARRAY(SELECT ta.team_id FROM team_agents ta
            WHERE ta.agent_id = a.id AND ta.team_id IN (SELECT team_id FROM active_teams)) AS team_ids
    FROM project
    LEFT JOIN agents a ON a.workspace_id = project.workspace_id AND a.status <> 'evicted'
      AND (a.project_id = project.id OR EXISTS (
        SELECT 1 FROM team_agents ta WHERE ta.agent_id = a.id AND ta.team_id IN (SELECT team_id FROM active_teams)))
      AND ($2::text[] IS NULL OR a.capabilities @> $2::text[])
      AND ($3::text[] IS NULL OR (a.status::text = ANY($3::text[]) AND a.last_heartbeat_at > $4::timestamptz))`,
};

interface RosterRow {
  id: string;
  workspace_id: string;
  code: string;
  name: string;
  created_at: Date;
  archived_at: Date | null;
  workspace_slug: string;
  agent_id: string | null;
  agent_name: string;
  agent_status: string;
  capabilities: string[] | null;
  runtime_instance_id: string | null;
  last_heartbeat_at: Date | null;
  team_ids: string[];
}

/** Running agents free to take work (`availableOnly`): the running statuses that are also available ones. */
const AVAILABLE_RUNNING = AVAILABLE_STATUSES.filter((s) =>
  (RUNNING_AGENT_STATUSES as readonly string[]).includes(s),
);

export async function readRosterOfProject(
  pool: Pool,
  now: Date,
  projectId: string,
  filters: RosterFilters = {},
): Promise<{ project: InternalProject; roster: RosterEntry[] }> {
  const capabilities = [...new Set(filters.capabilities ?? [])];
  const cutoff = new Date(now.getTime() - AGENT_HEARTBEAT_FRESH_SECONDS * 1000);
  const { rows } = await pool.query<RosterRow>({
    ...READ_ROSTER,
    values: [
      projectId,
      capabilities.length > 0 ? capabilities : null,
      filters.availableOnly ? AVAILABLE_RUNNING : null,
      cutoff.toISOString(),
    ],
  });
  const first = rows[0];
  if (!first) throw projectNotFound(projectId);
  const project: InternalProject = {
    id: first.id,
    workspaceId: first.workspace_id,
    code: first.code,
    name: first.name,
    createdAt: first.created_at,
    archivedAt: first.archived_at,
    workspace: { id: first.workspace_id, slug: first.workspace_slug },
  };
  const roster = rows
    .filter((row) => row.agent_id !== null)
    .map((row): RosterEntry => {
      const agent = { status: row.agent_status as AgentStatus, lastHeartbeatAt: row.last_heartbeat_at };
      return {
        id: row.agent_id as string,
        name: row.agent_name,
        status: row.agent_status as RosterEntry['status'],
        capabilities: row.capabilities ?? [],
        runtimeInstanceId: row.runtime_instance_id,
        lastHeartbeatAt: row.last_heartbeat_at,
        running: Boolean(filters.availableOnly) || matchesRunningFilter(agent, now),
        teamIds: [...row.team_ids].sort(),
      };
    })
    .sort(compareRosterEntries);
  return { project, roster };
}
