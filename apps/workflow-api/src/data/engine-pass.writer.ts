import type { Sql } from '../db';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { columnList, INVOCATION_COLUMNS, RUN_STAGE_COLUMNS } from './row-columns';

/**
 * The statements of the engine's reconcile pass, sent on the pass's own pooled connection inside its transaction
 * (decision 112): named, so each connection parses and plans them once, and written as SQL, so a pass costs its
 * round trips and little else. Every update of an invocation or a stage sets what the model's `@updatedAt`
 * would.
 */

const STAGE_FIELDS = columnList(RUN_STAGE_COLUMNS, 's');
const INVOCATION_FIELDS = columnList(INVOCATION_COLUMNS, 'i');

/** The run's stages in order. */
export async function readRunStages(sql: Sql, invocationId: string): Promise<RunStage[]> {
  return sql.rows<RunStage>({
    name: 'engine_run_stages',
    text: `SELECT ${STAGE_FIELDS} FROM run_stages s WHERE s.invocation_id = $1 ORDER BY s.position`,
    values: [invocationId],
  });
}

/** The key of the run's first stage neither completed nor skipped, or null. */
export async function firstUnfinishedStageKey(sql: Sql, invocationId: string): Promise<string | null> {
  const rows = await sql.rows<{ key: string }>({
    name: 'engine_first_unfinished_stage',
    text: `SELECT s.key FROM run_stages s
      WHERE s.invocation_id = $1 AND s.state NOT IN ('completed', 'skipped') ORDER BY s.position LIMIT 1`,
    values: [invocationId],
  });
  return rows[0]?.key ?? null;
}

/** Whether the invocation has a run. */
export async function runExists(sql: Sql, invocationId: string): Promise<boolean> {
  const rows = await sql.rows({
    name: 'engine_run_exists',
    text: 'SELECT 1 AS found FROM workflow_runs WHERE invocation_id = $1',
    values: [invocationId],
  });
  return rows.length > 0;
}

/** The invocation's run ends (`ended`, at `now`), unless it has ended already. */
export async function endRunRow(sql: Sql, invocationId: string, now: Date): Promise<void> {
  await sql.rows({
    name: 'engine_run_end',
    text: `UPDATE workflow_runs SET state = 'ended', ended_at = $2::timestamptz
      WHERE invocation_id = $1 AND ended_at IS NULL`,
    values: [invocationId, now.toISOString()],
  });
}

/**
 * The fields of an invocation the engine writes: each one's column, the type its value is sent as, and the letter
 * that names it in a statement's name.
 */
const PATCHABLE = {
  state: { column: 'state', cast: 'text', letter: 's' },
  attention: { column: 'attention', cast: 'text', letter: 'a' },
  attentionReason: { column: 'attention_reason', cast: 'text', letter: 'r' },
  launchedAt: { column: 'launched_at', cast: 'timestamptz', letter: 'l' },
  approvalRequired: { column: 'approval_required', cast: 'boolean', letter: 'p' },
  completedAt: { column: 'completed_at', cast: 'timestamptz', letter: 'c' },
  queuedAt: { column: 'queued_at', cast: 'timestamptz', letter: 'q' },
  blockers: { column: 'blockers', cast: 'jsonb', letter: 'b' },
} as const;

type Patchable = keyof typeof PATCHABLE;

/** What {@link updateInvocationFields} writes: the model's fields, blockers as any JSON list. */
export type InvocationFields = Partial<Pick<Invocation, Exclude<Patchable, 'blockers'>>> & {
  blockers?: unknown[];
};

/** The statement of each set of fields written, built once per process (its name is the fields' letters). */
const updateStatements = new Map<string, string>();

function updateStatement(name: string, keys: Patchable[]): string {
  let text = updateStatements.get(name);
  if (text === undefined) {
    const sets = keys.map((key, i) => `${PATCHABLE[key].column} = $${i + 3}::${PATCHABLE[key].cast}`);
    text = `UPDATE invocations i SET ${[...sets, 'updated_at = $2::timestamptz'].join(', ')}
      WHERE i.id = $1 RETURNING ${INVOCATION_FIELDS}`;
    updateStatements.set(name, text);
  }
  return text;
}

/** Writes `fields` (and `updated_at`) to the invocation; answers the row as updated. */
export async function updateInvocationFields(
  sql: Sql,
  invocationId: string,
  fields: InvocationFields,
  now: Date,
): Promise<Invocation> {
  const keys = (Object.keys(PATCHABLE) as Patchable[]).filter((key) => fields[key] !== undefined);
  // One name per set of fields written, a letter each (within Postgres's 63 characters of a name).
  const name = `engine_invocation_set_${keys.map((key) => PATCHABLE[key].letter).join('')}`;
  const values = keys.map((key) => {
    const value = fields[key];
    return value instanceof Date ? value.toISOString() : key === 'blockers' ? JSON.stringify(value) : value;
  });
  const rows = await sql.rows<Invocation>({
    name,
    text: updateStatement(name, keys),
    values: [invocationId, now.toISOString(), ...values],
  });
  return rows[0]!;
}

/**
 * Gives `stage` to an agent: only while it has the owner and state read (`IS NOT DISTINCT FROM`: no owner is a
 * condition too). `ownerSpawn` is written when given. True when the stage was taken.
 */
export async function assignStage(
  sql: Sql,
  stage: Pick<RunStage, 'id' | 'ownerAgentId' | 'state' | 'firstAssignedAt'>,
  owner: { agentId: string; handoffId: string; ownerSpawn?: unknown },
  now: Date,
): Promise<boolean> {
  const rows = await sql.rows({
    name: 'engine_stage_assign',
    text: `UPDATE run_stages SET owner_agent_id = $4, handoff_id = $5, state = 'assigned', attempts = attempts + 1,
        blocker_reason = NULL, progress = NULL, assigned_at = $6::timestamptz,
        first_assigned_at = COALESCE(first_assigned_at, $6::timestamptz), claimed_at = NULL,
        last_heartbeat_at = $6::timestamptz,
        owner_spawn = CASE WHEN $7::boolean THEN $8::jsonb ELSE owner_spawn END
      WHERE id = $1 AND owner_agent_id IS NOT DISTINCT FROM $2 AND state = $3
      RETURNING id`,
    values: [
      stage.id,
      stage.ownerAgentId,
      stage.state,
      owner.agentId,
      owner.handoffId,
      now.toISOString(),
      owner.ownerSpawn !== undefined,
      owner.ownerSpawn !== undefined ? JSON.stringify(owner.ownerSpawn) : null,
    ],
  });
  return rows.length > 0;
}

/** The stage keeps `ownerSpawn` (the record of a spawn in progress for it). */
export async function keepOwnerSpawn(sql: Sql, stageId: string, ownerSpawn: unknown): Promise<void> {
  await sql.rows({
    name: 'engine_stage_owner_spawn',
    text: 'UPDATE run_stages SET owner_spawn = $2::jsonb WHERE id = $1',
    values: [stageId, JSON.stringify(ownerSpawn)],
  });
}

/**
 * Takes `stage` from its owner (`pending`, no owner, no handoff) with its stalled agents and times as given, only
 * while the owner and the last heartbeat are those read. True when it was taken.
 */
export async function releaseStage(
  sql: Sql,
  stage: Pick<RunStage, 'id' | 'ownerAgentId' | 'lastHeartbeatAt'>,
  stalled: { agentIds: string[]; at: unknown },
): Promise<boolean> {
  const rows = await sql.rows({
    name: 'engine_stage_release',
    text: `UPDATE run_stages SET state = 'pending', owner_agent_id = NULL, handoff_id = NULL,
        stalled_agent_ids = $4::jsonb, stalled_at = $5::jsonb
      WHERE id = $1 AND owner_agent_id IS NOT DISTINCT FROM $2
        AND last_heartbeat_at IS NOT DISTINCT FROM $3::timestamptz
      RETURNING id`,
    values: [
      stage.id,
      stage.ownerAgentId,
      stage.lastHeartbeatAt?.toISOString() ?? null,
      JSON.stringify(stalled.agentIds),
      JSON.stringify(stalled.at),
    ],
  });
  return rows.length > 0;
}

/** The outbox rows a pass marked processed are pending again (the pass still needs the hub). */
export async function unmarkOutboxRows(sql: Sql, ids: string[]): Promise<void> {
  await sql.rows({
    name: 'engine_outbox_unmark',
    text: 'UPDATE workflow_outbox SET processed_at = NULL WHERE id = ANY($1::text[])',
    values: [ids],
  });
}
