import { newId } from '@svc/service-kit';
import type { Pool } from 'pg';
import type { Tx } from '../db';
import type { Blocker } from '../domain/blockers';
import type { Invocation } from '../generated/prisma/client';
import { auditEventInsert } from './audit.repository';
import type { WorkflowAudit, WorkflowAuditEntry } from './audit.repository';
import type { ReconcileJob } from './reconcile.queue';
import { columnList, fieldsOf, INVOCATION_COLUMNS } from './row-columns';

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

/** Where the values of the audit event begin in {@link LAUNCH_AT_ONCE}. */
const AT_ONCE_AUDIT_FIRST_PARAMETER = 8;

/**
 * {@link LAUNCH} without a transaction of its own, for an invocation still `received` or `blocked`: the update's
 * own row lock is the invocation's lock, and its condition is the check the locked launch makes, so the
 * invocation set `launching`, its outbox row and the audit event commit together in one round trip — or nothing
 * is written (no row answered: the invocation moved on, and the caller takes the locked way). The launch time is
 * the first launch's when there was one (a blocked invocation launched again), and the deadline counts from it.
 * The outbox row is written as enqueued (its job is enqueued right after): the sweeper re-enqueues it only when
 * it is not processed within the redelivery time, and a failed enqueue clears the stamp ({@link unstampOutbox}).
 */
const LAUNCH_AT_ONCE = {
  name: 'invocation_launch_at_once',
  text: `
    WITH launched AS (
      UPDATE invocations i
      SET state = 'launching', attention = 'none', attention_reason = NULL, blockers = $3::jsonb,
        approval_required = $4, launched_at = COALESCE(i.launched_at, $5::timestamptz),
        deadline_at = COALESCE(i.launched_at, $5::timestamptz) + make_interval(secs => $6::double precision),
        updated_at = $5::timestamptz
      WHERE i.id = $1 AND i.project_id = $2 AND i.state IN ('received', 'blocked')
      RETURNING ${columnList(INVOCATION_COLUMNS, 'i')}
    ),
    outbox AS (
      INSERT INTO workflow_outbox (id, invocation_id, reason, enqueued_at, attempts)
      SELECT $7, $1, 'launch', $5::timestamptz, 1 FROM launched
    ),
    audited AS (
      ${auditEventInsert(AT_ONCE_AUDIT_FIRST_PARAMETER, 'EXISTS (SELECT 1 FROM launched)')}
    )
    SELECT * FROM launched`,
};

export interface LaunchAtOnce extends Omit<LaunchWrite, 'launchedAt' | 'deadlineAt'> {
  /** The launch time, unless the invocation was launched before (then that one stays). */
  now: Date;
  /** The template's run deadline; none when it sets none. */
  deadlineSeconds: number | undefined;
}

/**
 * Launches a `received` or `blocked` invocation in one statement ({@link LAUNCH_AT_ONCE}); null when it is in
 * another state by now (nothing written).
 */
export async function launchAtOnce(
  pool: Pool,
  audit: WorkflowAudit,
  launch: LaunchAtOnce,
): Promise<{ invocation: Invocation; job: ReconcileJob } | null> {
  const outboxId = newId('obx');
  const { rows } = await pool.query<Record<string, unknown>>({
    ...LAUNCH_AT_ONCE,
    values: [
      launch.invocationId,
      launch.projectId,
      JSON.stringify(launch.blockers),
      launch.approvalRequired,
      launch.now.toISOString(),
      launch.deadlineSeconds ?? null,
      outboxId,
      ...audit.statementValues(launch.event, launch.now),
    ],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    invocation: fieldsOf<Invocation>(row, INVOCATION_COLUMNS),
    job: { outboxId, invocationId: launch.invocationId, projectId: launch.projectId },
  };
}
