import type { Pool } from 'pg';
import {
  AGENT_HEARTBEAT_FRESH_SECONDS,
  RUNNING_AGENT_STATUSES,
  matchesRunningFilter,
} from '../domain/host-readiness';
import { AVAILABLE_STATUSES, compareRosterEntries } from '../domain/roster';
import type { RosterEntry } from '../domain/roster';
import type { AgentStatus } from '../generated/prisma/client';
import { projectNotFound } from './projects.lookups';
import type { InternalProject } from './projects.lookups';

export interface RosterFilters {
  /** The agent must hold every one of these capabilities. */
  capabilities?: readonly string[];
  /** Only running agents that are online or idle (free to take work). */
  availableOnly?: boolean;
}

/**
 * The agents that can work on a project: members of the teams actively assigned to it (not unassigned) and
 * agents whose own project it is, each once, never evicted ones; only the project's workspace is looked at,
 * whatever rows point elsewhere. ONE named prepared statement on the pool (decision 97) reads the project and
 * its workspace, the project's active teams and the roster agents with their memberships of those teams; the
 * project's row comes back with every agent row, or alone (agent columns null) when the roster is empty.
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

/**
 * The project (with its workspace) and its roster, best choice first. "Running" is decided by the rule the
 * Networks view counts with (`matchesRunningFilter`, on the rows read; with `availableOnly` the statement
 * already applied it), and the order by {@link compareRosterEntries} here, so no collation decides it. A
 * missing project is 404 `project_not_found`.
 */
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
