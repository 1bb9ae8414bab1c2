import type { Db } from '../db';
import type { RunLimits } from '../domain/run-limits';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { fieldsOf, INVOCATION_COLUMNS, RUN_STAGE_COLUMNS, selectColumns } from './row-columns';
import { INVOCATION_RUN_LIMITS, runLimitsOfRow } from './run-limits.lookups';

const STAGE_PREFIX = 'stage.';
const INVOCATION_AND_STAGES = [
  selectColumns(INVOCATION_COLUMNS, 'i'),
  selectColumns(RUN_STAGE_COLUMNS, 's', STAGE_PREFIX),
] as const;

/**
 * An invocation, its run's stages in order (none before its run starts) and the run limits of its project and
 * workspace, read without a lock in one statement; null when no such invocation exists.
 */
export async function readInvocationWithStages(
  db: Pick<Db, '$queryRaw'>,
  invocationId: string,
): Promise<{ invocation: Invocation; stages: RunStage[]; limits: RunLimits } | null> {
  const rows = await db.$queryRaw<Record<string, unknown>[]>`
    SELECT ${INVOCATION_AND_STAGES[0]}, ${INVOCATION_AND_STAGES[1]}, ${INVOCATION_RUN_LIMITS}
    FROM invocations i LEFT JOIN run_stages s ON s.invocation_id = i.id
    WHERE i.id = ${invocationId}
    ORDER BY s.position`;
  const first = rows[0];
  if (!first) return null;
  return {
    invocation: fieldsOf<Invocation>(first, INVOCATION_COLUMNS),
    stages: rows
      .filter((row) => row[`${STAGE_PREFIX}id`] !== null)
      .map((row) => fieldsOf<RunStage>(row, RUN_STAGE_COLUMNS, STAGE_PREFIX)),
    limits: runLimitsOfRow(first),
  };
}
