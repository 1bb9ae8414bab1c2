import type { Sql } from '../db';
import type { Invocation } from '../generated/prisma/client';
import { columnList, INVOCATION_COLUMNS } from './row-columns';

/**
 * A run started in one statement: the run is inserted unless the invocation has one (`ON CONFLICT DO NOTHING`:
 * the run is unique per invocation); its stages, and the invocation set `running`, only with a run inserted by
 * this statement. A queued launch that got its slot leaves the queue with the limit's blocker ($8). Answers the
 * invocation as updated, or no row when the run existed.
 */
const START_RUN = `
  WITH run AS (
    INSERT INTO workflow_runs (id, invocation_id, workspace_id, project_id, started_at)
    VALUES ($1, $2, $3, $4, $5::timestamptz)
    ON CONFLICT DO NOTHING
    RETURNING id
  ),
  stages AS (
    INSERT INTO run_stages (id, run_id, invocation_id, workspace_id, position, key, title, required_capabilities)
    SELECT s.id, run.id, $2, $3, s.position, s.key, s.title, s.required_capabilities
    FROM run CROSS JOIN jsonb_to_recordset($6::jsonb)
      AS s(id text, position int, key text, title text, required_capabilities jsonb)
    RETURNING id
  )
  UPDATE invocations i
  SET state = 'running', launched_at = COALESCE(i.launched_at, $5::timestamptz), updated_at = $7::timestamptz,
    queued_at = CASE WHEN $8::boolean THEN NULL ELSE i.queued_at END,
    attention = CASE WHEN $8::boolean THEN 'none' ELSE i.attention END,
    attention_reason = CASE WHEN $8::boolean THEN NULL ELSE i.attention_reason END,
    blockers = CASE WHEN $8::boolean THEN '[]'::jsonb ELSE i.blockers END
  WHERE i.id = $2 AND EXISTS (SELECT 1 FROM run)
  RETURNING ${columnList(INVOCATION_COLUMNS, 'i')}`;

export interface RunStart {
  runId: string;
  invocationId: string;
  workspaceId: string;
  projectId: string;
  startedAt: Date;
  stages: { id: string; position: number; key: string; title: string; requiredCapabilities: string[] }[];
  /** The invocation waited queued for a run slot: it leaves the queue, its attention and blockers cleared. */
  wasQueued: boolean;
}

/**
 * Starts the run (see {@link START_RUN}): answers the invocation as updated (`running`), or null when its run
 * existed already (nothing written).
 */
export async function insertRunWithStages(sql: Sql, run: RunStart): Promise<Invocation | null> {
  const rows = await sql.rows<Invocation>({
    name: 'engine_run_start',
    text: START_RUN,
    values: [
      run.runId,
      run.invocationId,
      run.workspaceId,
      run.projectId,
      run.startedAt.toISOString(),
      JSON.stringify(
        run.stages.map((stage) => ({
          id: stage.id,
          position: stage.position,
          key: stage.key,
          title: stage.title,
          required_capabilities: stage.requiredCapabilities,
        })),
      ),
      new Date().toISOString(),
      run.wasQueued,
    ],
  });
  return rows[0] ?? null;
}
