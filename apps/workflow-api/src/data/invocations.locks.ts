import type { Tx } from '../db';
import type { RunLimits } from '../domain/run-limits';
import type { Invocation } from '../generated/prisma/client';
import { INVOCATION_COLUMNS, selectColumns } from './row-columns';
import { INVOCATION_RUN_LIMITS, runLimitsOfRow } from './run-limits.lookups';

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

/**
 * {@link lockInvocation} that also reads the run limits of the invocation's project and workspace in the same
 * statement (the engine's, which may start the run under them).
 */
export async function lockInvocationWithRunLimits(
  tx: Tx,
  invocationId: string,
): Promise<{ invocation: Invocation; limits: RunLimits } | null> {
  const rows = await tx.$queryRaw<(Invocation & Record<string, unknown>)[]>`
    SELECT ${LOCKED_INVOCATION}, ${INVOCATION_RUN_LIMITS} FROM invocations i
    WHERE i.id = ${invocationId} FOR UPDATE OF i`;
  const row = rows[0];
  if (!row) return null;
  const { limitProject: _project, limitWorkspace: _workspace, ...invocation } = row;
  return { invocation: invocation as Invocation, limits: runLimitsOfRow(row) };
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
