import type { Tx } from '../db';

/**
 * A run and its stages in one statement: the run is inserted unless the invocation has one (`ON CONFLICT DO
 * NOTHING`: the run is unique per invocation), and its stages only with a run inserted by this statement.
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
  SELECT (SELECT count(*) FROM run)::int AS runs, (SELECT count(*) FROM stages)::int AS stages`;

export interface RunStart {
  runId: string;
  invocationId: string;
  workspaceId: string;
  projectId: string;
  startedAt: Date;
  stages: { id: string; position: number; key: string; title: string; requiredCapabilities: string[] }[];
}

/** Inserts the run and its stages (see {@link START_RUN}); false when the invocation's run existed already. */
export async function insertRunWithStages(tx: Pick<Tx, '$queryRawUnsafe'>, run: RunStart): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<{ runs: number; stages: number }[]>(
    START_RUN,
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
  );
  return Number(rows[0]?.runs ?? 0) === 1;
}
