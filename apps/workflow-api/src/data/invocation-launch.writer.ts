import { newId } from '@svc/service-kit';
import type { Tx } from '../db';
import type { Blocker } from '../domain/blockers';
import type { Invocation } from '../generated/prisma/client';
import { auditEventInsert } from './audit.repository';
import type { WorkflowAudit, WorkflowAuditEntry } from './audit.repository';
import type { ReconcileJob } from './reconcile.queue';
import { columnList, INVOCATION_COLUMNS } from './row-columns';

/** Where the values of the `invocation.launch_requested` audit event begin in {@link LAUNCH}. */
const AUDIT_FIRST_PARAMETER = 8;

/**
 * An accepted launch's one statement: the invocation set `launching`, its outbox row and the audit event
 * (data-modifying CTEs around the update, which answers the updated row). Run in the launch's transaction,
 * under the invocation's lock, so all three commit together or not at all.
 */
const LAUNCH = `
  WITH outbox AS (
    INSERT INTO workflow_outbox (id, invocation_id, reason) VALUES ($7, $1, 'launch')
  ),
  audited AS (
    ${auditEventInsert(AUDIT_FIRST_PARAMETER, 'true')}
  )
  UPDATE invocations i
  SET state = 'launching', attention = 'none', attention_reason = NULL, blockers = $2::jsonb,
    approval_required = $3, launched_at = $4::timestamptz, deadline_at = $5::timestamptz,
    updated_at = $6::timestamptz
  WHERE i.id = $1
  RETURNING ${columnList(INVOCATION_COLUMNS, 'i')}`;

export interface LaunchWrite {
  invocationId: string;
  projectId: string;
  /** Shown on the invocation while it waits for an owner (none when one can take the stage). */
  blockers: Blocker[];
  approvalRequired: boolean;
  launchedAt: Date;
  deadlineAt: Date | null;
  /** The `invocation.launch_requested` event. */
  event: WorkflowAuditEntry;
}

/**
 * Writes an accepted launch (see {@link LAUNCH}); answers the updated invocation and the reconcile job to enqueue
 * after the commit, which names the project (a run-starting job takes its turn with the project's others).
 */
export async function writeLaunch(
  tx: Pick<Tx, '$queryRawUnsafe'>,
  audit: WorkflowAudit,
  launch: LaunchWrite,
): Promise<{ invocation: Invocation; job: ReconcileJob }> {
  const now = new Date();
  const outboxId = newId('obx');
  const rows = await tx.$queryRawUnsafe<Invocation[]>(
    LAUNCH,
    launch.invocationId,
    JSON.stringify(launch.blockers),
    launch.approvalRequired,
    launch.launchedAt.toISOString(),
    launch.deadlineAt?.toISOString() ?? null,
    now.toISOString(),
    outboxId,
    ...audit.statementValues(launch.event, now),
  );
  const invocation = rows[0];
  if (!invocation) throw new Error(`launch of ${launch.invocationId}: the invocation is gone under its lock`);
  return {
    invocation,
    job: { outboxId, invocationId: launch.invocationId, projectId: launch.projectId },
  };
}
