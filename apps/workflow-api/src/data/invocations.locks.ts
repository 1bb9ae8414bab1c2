import type { Sql, Tx } from '../db';
import type { RunLimits } from '../domain/run-limits';
import type { Invocation } from '../generated/prisma/client';
import { columnList, INVOCATION_COLUMNS, selectColumns } from './row-columns';
import { INVOCATION_RUN_LIMITS_TEXT, runLimitsOfRow } from './run-limits.lookups';

const LOCKED_INVOCATION = selectColumns(INVOCATION_COLUMNS, 'i');

/**
 * Locks the invocation row for the rest of the transaction and reads it, in one statement. Every writer of an
 * invocation's run (reconcile, launch, approval, stage actions, publication) takes this lock first, so they
 * never interleave.
 */
export async function lockInvocation(tx: Tx, invocationId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<Invocation[]>`
    SELECT ${LOCKED_INVOCATION} FROM invocations i WHERE i.id = ${invocationId} FOR UPDATE`;
  return rows[0] ?? null;
}

const RECONCILE_LOCK = `
  WITH marked AS (
    UPDATE workflow_outbox SET processed_at = $2::timestamptz
    WHERE invocation_id = $1 AND processed_at IS NULL
    RETURNING id
  )
  SELECT ${columnList(INVOCATION_COLUMNS, 'i')}, ${INVOCATION_RUN_LIMITS_TEXT},
    ARRAY(SELECT id FROM marked) AS "outboxIds"
  FROM invocations i
  WHERE i.id = $1 FOR UPDATE OF i`;

/**
 * Serializes the starts of runs in a workspace with run limits until the transaction ends (a transaction
 * advisory lock), so two starts never both take its last slot.
 */
export async function lockRunStartsOfWorkspace(sql: Sql, workspaceId: string): Promise<void> {
  await sql.rows({
    name: 'run_limits_start_lock',
    text: 'SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended($1, 0))',
    values: [`run-limits:${workspaceId}`],
  });
}

/** What the engine's pass finds under the invocation's lock ({@link lockInvocationForReconcile}). */
export interface ReconcileLock {
  invocation: Invocation;
  /** The run limits of its project and workspace. */
  limits: RunLimits;
  /** The invocation's outbox rows that were pending, now marked processed in this transaction. */
  outboxIds: string[];
}

/**
 * The reconcile's {@link lockInvocation}: in the same statement it reads the run limits of the invocation's
 * project and workspace (the pass may start the run under them) and marks the invocation's pending outbox rows
 * processed at `processedAt`, answering their ids (the pass unmarks them when it does not finish). The mark is
 * part of the pass's transaction: it commits with what the pass did, or not at all. Null when no such invocation
 * exists.
 */
export async function lockInvocationForReconcile(
  sql: Sql,
  invocationId: string,
  processedAt: Date,
): Promise<ReconcileLock | null> {
  const rows = await sql.rows<Invocation & Record<string, unknown>>({
    name: 'engine_invocation_lock',
    text: RECONCILE_LOCK,
    values: [invocationId, processedAt.toISOString()],
  });
  const row = rows[0];
  if (!row) return null;
  const { limitProject: _project, limitWorkspace: _workspace, outboxIds, ...invocation } = row;
  return {
    invocation: invocation as Invocation,
    limits: runLimitsOfRow(row),
    outboxIds: (outboxIds as string[] | null) ?? [],
  };
}

/**
 * {@link lockInvocation} for the invocation of a stage, found in the same statement that locks it; null when no
 * such stage exists.
 */
export async function lockInvocationOfStage(tx: Tx, stageId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<Invocation[]>`
    SELECT ${LOCKED_INVOCATION} FROM run_stages s JOIN invocations i ON i.id = s.invocation_id
    WHERE s.id = ${stageId} FOR UPDATE OF i`;
  return rows[0] ?? null;
}
