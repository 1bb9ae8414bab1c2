import { inPooledTransaction } from '@svc/db-kit';
import type { Pool } from 'pg';
import { RUNNING_AGENT_STATUSES } from '../domain/host-readiness';
import type { Handoff, HandoffStatus, Prisma } from '../generated/prisma/client';

/** The handoff's columns, in the order and with the names {@link handoffOfRow} reads. */
const HANDOFF_COLUMNS = `id, workspace_id, project_id, title, description, status::text AS status, assignee_agent_id,
  created_by_kind, created_by_id, reference_kind, reference_id, reference_data, blocker_reason, created_at,
  updated_at, accepted_at, claimed_at, blocked_at, completed_at, cancelled_at`;

/** The statuses of an agent that takes new work (`offline` is stopped, `lost` went silent), as SQL literals. */
const RUNNING_IN_SQL = RUNNING_AGENT_STATUSES.map((status) => `'${status}'`).join(', ');

/** The transaction advisory lock that serializes one (workspace, reference, assignee) triple. */
const LOCK = {
  name: 'hub_stage_handoff_lock',
  text: 'SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended($1, 0))',
};

/**
 * After the lock, in ONE statement: the handoff an earlier call created for the triple, else the checks (the
 * workspace, the project in it, the assignee in it and running — not evicted, stopped or lost —, its host not
 * draining, the host row read `FOR SHARE` so that a drain commits before this check or after this handoff)
 * and, when they all pass, the new handoff with its `handoff.created` audit event (data-modifying CTEs). What
 * each check found comes back too, so the caller answers the same problem the separate reads did.
 */
const CREATE = {
  name: 'hub_stage_handoff_create',
  text: `
    WITH workspace AS (SELECT id FROM workspaces WHERE id = $1),
    existing AS (
      SELECT ${HANDOFF_COLUMNS} FROM handoffs
      WHERE workspace_id = $1 AND reference_kind = $2 AND reference_id = $3 AND assignee_agent_id = $4
      ORDER BY id LIMIT 1
    ),
    project AS (SELECT id FROM projects WHERE id = $5 AND workspace_id = $1),
    agent AS (SELECT workspace_id, status::text AS status, runtime_instance_id FROM agents WHERE id = $4),
    host AS (
      SELECT drain_requested_at FROM runtime_hosts
      WHERE id = (SELECT runtime_instance_id FROM agent WHERE workspace_id = $1 AND status <> 'evicted')
      FOR SHARE
    ),
    accepted AS (
      SELECT 1 AS ok
      WHERE EXISTS (SELECT 1 FROM workspace) AND NOT EXISTS (SELECT 1 FROM existing)
        AND EXISTS (SELECT 1 FROM project)
        AND EXISTS (SELECT 1 FROM agent WHERE workspace_id = $1 AND status IN (${RUNNING_IN_SQL}))
        AND NOT EXISTS (SELECT 1 FROM host WHERE drain_requested_at IS NOT NULL)
    ),
    inserted AS (
      INSERT INTO handoffs (id, workspace_id, project_id, title, description, assignee_agent_id, created_by_kind,
        created_by_id, reference_kind, reference_id, reference_data, created_at, updated_at)
      SELECT $6, $1, $5, $7, $8, $4, $9, $10, $2, $3, $11::jsonb, $12::timestamptz, $12::timestamptz FROM accepted
      RETURNING ${HANDOFF_COLUMNS}
    ),
    audited AS (
      INSERT INTO audit_events (id, workspace_id, actor_kind, actor_id, action, target_type, target_id, data,
        request_id)
      SELECT $13, $1, $9, $10, 'handoff.created', 'handoff', inserted.id, $14::jsonb, $15 FROM inserted
      RETURNING id
    )
    SELECT checks.*, found.*
    FROM (
      SELECT EXISTS (SELECT 1 FROM workspace) AS workspace_found, EXISTS (SELECT 1 FROM project) AS project_found,
        (SELECT workspace_id FROM agent) AS agent_workspace_id, (SELECT status FROM agent) AS agent_status,
        (SELECT runtime_instance_id FROM agent) AS agent_host_id,
        EXISTS (SELECT 1 FROM host WHERE drain_requested_at IS NOT NULL) AS host_draining,
        EXISTS (SELECT 1 FROM audited) AS created
    ) checks
    LEFT JOIN (SELECT * FROM inserted UNION ALL SELECT * FROM existing) found ON true`,
};

interface HandoffRow {
  id: string;
  workspace_id: string;
  project_id: string | null;
  title: string;
  description: string;
  status: string;
  assignee_agent_id: string | null;
  created_by_kind: string;
  created_by_id: string | null;
  reference_kind: string | null;
  reference_id: string | null;
  reference_data: Prisma.JsonValue;
  blocker_reason: string | null;
  created_at: Date;
  updated_at: Date;
  accepted_at: Date | null;
  claimed_at: Date | null;
  blocked_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
}

interface CreateRow extends Partial<HandoffRow> {
  workspace_found: boolean;
  project_found: boolean;
  agent_workspace_id: string | null;
  agent_status: string | null;
  agent_host_id: string | null;
  host_draining: boolean;
  created: boolean;
}

function handoffOfRow(row: HandoffRow): Handoff {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    projectId: row.project_id,
    title: row.title,
    description: row.description,
    status: row.status as HandoffStatus,
    assigneeAgentId: row.assignee_agent_id,
    createdByKind: row.created_by_kind,
    createdById: row.created_by_id,
    referenceKind: row.reference_kind,
    referenceId: row.reference_id,
    referenceData: row.reference_data,
    blockerReason: row.blocker_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    acceptedAt: row.accepted_at,
    claimedAt: row.claimed_at,
    blockedAt: row.blocked_at,
    completedAt: row.completed_at,
    cancelledAt: row.cancelled_at,
  };
}

export interface StageHandoffInsert {
  /** The advisory lock's key (the triple). */
  lockKey: string;
  workspaceId: string;
  projectId: string;
  assigneeAgentId: string;
  referenceKind: string;
  referenceId: string;
  referenceData: Record<string, unknown>;
  id: string;
  title: string;
  description: string;
  createdByKind: string;
  createdById: string | null;
  at: Date;
  audit: { id: string; data: Record<string, unknown>; requestId: string | null };
}

/** What the statement found: the handoff (new or earlier), else why none was created. */
export type StageHandoffOutcome =
  | { kind: 'created' | 'existing'; handoff: Handoff }
  | { kind: 'workspace_not_found' | 'project_not_found' | 'assignee_not_found' | 'assignee_evicted' }
  | { kind: 'assignee_not_running'; status: string }
  | { kind: 'host_draining'; hostId: string };

/**
 * The idempotent creation of a stage handoff in four statements on one pooled connection (decision 97):
 * `BEGIN`, the advisory lock of the triple, the statement above, `COMMIT`. The lock is its own statement so
 * that the next statement's snapshot is taken after it is held and sees what the previous holder committed.
 */
export async function insertStageHandoff(
  pool: Pool,
  input: StageHandoffInsert,
): Promise<StageHandoffOutcome> {
  const row = await inPooledTransaction(pool, async (client) => {
    await client.query({ ...LOCK, values: [input.lockKey] });
    const { rows } = await client.query<CreateRow>({
      ...CREATE,
      values: [
        input.workspaceId,
        input.referenceKind,
        input.referenceId,
        input.assigneeAgentId,
        input.projectId,
        input.id,
        input.title,
        input.description,
        input.createdByKind,
        input.createdById,
        JSON.stringify(input.referenceData),
        input.at.toISOString(),
        input.audit.id,
        JSON.stringify(input.audit.data),
        input.audit.requestId,
      ],
    });
    return rows[0];
  });
  if (!row) throw new Error('insertStageHandoff: the statement answered no row');
  // In the order of the separate checks: the workspace, an earlier handoff, the project, the assignee, its host.
  if (!row.workspace_found) return { kind: 'workspace_not_found' };
  if (row.id !== undefined && row.id !== null) {
    return { kind: row.created ? 'created' : 'existing', handoff: handoffOfRow(row as HandoffRow) };
  }
  if (!row.project_found) return { kind: 'project_not_found' };
  if (row.agent_workspace_id !== input.workspaceId) return { kind: 'assignee_not_found' };
  if (row.agent_status === 'evicted') return { kind: 'assignee_evicted' };
  if (row.agent_status !== null && !(RUNNING_AGENT_STATUSES as readonly string[]).includes(row.agent_status))
    return { kind: 'assignee_not_running', status: row.agent_status };
  if (row.host_draining && row.agent_host_id) return { kind: 'host_draining', hostId: row.agent_host_id };
  throw new Error('insertStageHandoff: no handoff and no failed check');
}
