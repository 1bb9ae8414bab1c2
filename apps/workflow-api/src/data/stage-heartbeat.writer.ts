import type { Pool } from 'pg';
import { OPEN_STAGE_STATES } from '../domain/invocation-states';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { columnList, fieldsOf, INVOCATION_COLUMNS, RUN_STAGE_COLUMNS } from './row-columns';

/**
 * A heartbeat's one statement, named so each connection parses and plans it once: the stage's heartbeat time
 * (and progress note, when one is sent) set when the caller owns the open stage, answered with the stage's
 * invocation. No lock: a heartbeat changes nothing another writer decides on but the time it reads.
 */
const HEARTBEAT = {
  name: 'stage_heartbeat',
  text: `
    WITH stage AS (
      UPDATE run_stages s
      SET last_heartbeat_at = $5::timestamptz, progress = COALESCE($6::text, s.progress)
      WHERE s.id = $1 AND s.workspace_id = $2 AND s.owner_agent_id = $3 AND s.state = ANY($4::text[])
      RETURNING ${columnList(RUN_STAGE_COLUMNS, 's', 's_')}
    )
    SELECT stage.*, ${columnList(INVOCATION_COLUMNS, 'i', 'i_')}
    FROM stage LEFT JOIN invocations i ON i.id = stage."s_invocationId"`,
};

export interface StageHeartbeat {
  stageId: string;
  workspaceId: string;
  agentId: string;
  at: Date;
  /** The progress note to keep (already redacted); undefined keeps the last one. */
  progress?: string;
}

/**
 * The heartbeat of the owner of an open stage: the updated stage and its invocation, or null when nothing was
 * updated (the stage is not the caller's, or not open, or does not exist).
 */
export async function writeStageHeartbeat(
  pool: Pool,
  heartbeat: StageHeartbeat,
): Promise<{ stage: RunStage; invocation: Invocation | null } | null> {
  const {
    rows: [row],
  } = await pool.query<Record<string, unknown>>({
    ...HEARTBEAT,
    values: [
      heartbeat.stageId,
      heartbeat.workspaceId,
      heartbeat.agentId,
      [...OPEN_STAGE_STATES],
      heartbeat.at.toISOString(),
      heartbeat.progress ?? null,
    ],
  });
  if (!row) return null;
  return {
    stage: fieldsOf<RunStage>(row, RUN_STAGE_COLUMNS, 's_'),
    invocation: row.i_id === null ? null : fieldsOf<Invocation>(row, INVOCATION_COLUMNS, 'i_'),
  };
}
