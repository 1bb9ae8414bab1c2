import type { Pool } from 'pg';
import type { RunLimits } from '../domain/run-limits';
import { OPEN_STAGE_STATES } from '../domain/invocation-states';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { columnList, fieldsOf, INVOCATION_COLUMNS, RUN_STAGE_COLUMNS } from './row-columns';
import { INVOCATION_RUN_LIMITS_TEXT, runLimitsOfRow } from './run-limits.lookups';

const STAGE_PREFIX = 'stage.';

/** A named statement on the pool: each connection parses and plans it once. */
const INVOCATION_WITH_STAGES = {
  name: 'engine_invocation_with_stages',
  text: `
    SELECT ${columnList(INVOCATION_COLUMNS, 'i')}, ${columnList(RUN_STAGE_COLUMNS, 's', STAGE_PREFIX)},
      ${INVOCATION_RUN_LIMITS_TEXT}
    FROM invocations i LEFT JOIN run_stages s ON s.invocation_id = i.id
    WHERE i.id = $1
    ORDER BY s.position`,
};

/** An invocation of a project with its run limits (the launch's read before it asks the hub). */
const INVOCATION_WITH_LIMITS = {
  name: 'invocation_with_run_limits',
  text: `
    SELECT ${columnList(INVOCATION_COLUMNS, 'i')}, ${INVOCATION_RUN_LIMITS_TEXT}
    FROM invocations i
    WHERE i.id = $1 AND i.project_id = $2`,
};

/** How many open stages each of the agents owns (agents owning none are left out). */
const OPEN_STAGES_BY_OWNER = {
  name: 'engine_open_stages_by_owner',
  text: `
    SELECT owner_agent_id AS "agentId", count(*)::int AS "open"
    FROM run_stages
    WHERE owner_agent_id = ANY($1::text[]) AND state = ANY($2::text[])
    GROUP BY owner_agent_id`,
};

/**
 * An invocation, its run's stages in order (none before its run starts) and the run limits of its project and
 * workspace, read without a lock in one statement; null when no such invocation exists.
 */
export async function readInvocationWithStages(
  pool: Pick<Pool, 'query'>,
  invocationId: string,
): Promise<{ invocation: Invocation; stages: RunStage[]; limits: RunLimits } | null> {
  const { rows } = await pool.query<Record<string, unknown>>({
    ...INVOCATION_WITH_STAGES,
    values: [invocationId],
  });
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

/** The open stages (assigned, claimed, blocked) each of `agentIds` owns, by agent; one statement. */
export async function openStagesByOwner(
  pool: Pick<Pool, 'query'>,
  agentIds: string[],
): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ agentId: string; open: number }>({
    ...OPEN_STAGES_BY_OWNER,
    values: [agentIds, [...OPEN_STAGE_STATES]],
  });
  return new Map(rows.map((row) => [row.agentId, row.open]));
}

/**
 * The project's invocation and the run limits of its project and workspace, read without a lock in one
 * statement; null when the project has no such invocation.
 */
export async function readInvocationWithLimits(
  pool: Pick<Pool, 'query'>,
  invocationId: string,
  projectId: string,
): Promise<{ invocation: Invocation; limits: RunLimits } | null> {
  const {
    rows: [row],
  } = await pool.query<Record<string, unknown>>({
    ...INVOCATION_WITH_LIMITS,
    values: [invocationId, projectId],
  });
  return row
    ? { invocation: fieldsOf<Invocation>(row, INVOCATION_COLUMNS), limits: runLimitsOfRow(row) }
    : null;
}
