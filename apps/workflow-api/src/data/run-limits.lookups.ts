import type { Db, Sql } from '../db';
import type { Blocker } from '../domain/blockers';
import { RUN_IN_PROGRESS_STATES, reachedRunLimit } from '../domain/run-limits';
import type { RunLimits, RunsInProgress } from '../domain/run-limits';

/** The project's and its workspace's run limits (null where none is set), in one statement. */
export async function loadRunLimits(sql: Sql, projectId: string, workspaceId: string): Promise<RunLimits> {
  const rows = await sql.rows<{ scope: string; scopeId: string; maxInProgress: number }>({
    name: 'run_limits_of_project',
    text: `SELECT scope, scope_id AS "scopeId", max_in_progress AS "maxInProgress" FROM run_limits
      WHERE scope_id IN ($1, $2)`,
    values: [projectId, workspaceId],
  });
  const of = (scope: string, id: string) =>
    rows.find((r) => r.scope === scope && r.scopeId === id)?.maxInProgress ?? null;
  return { project: of('project', projectId), workspace: of('workspace', workspaceId) };
}

/**
 * The run limits of the invocation aliased `i` (its project's, its workspace's) as two columns of a statement
 * that reads the invocation: `limitProject`, `limitWorkspace` ({@link runLimitsOfRow}). The same rows
 * {@link loadRunLimits} reads, without a round trip of their own.
 */
export const INVOCATION_RUN_LIMITS_TEXT = `(SELECT l.max_in_progress FROM run_limits l WHERE l.scope_id = i.project_id AND l.scope = 'project')
      AS "limitProject",
    (SELECT l.max_in_progress FROM run_limits l WHERE l.scope_id = i.workspace_id AND l.scope = 'workspace')
      AS "limitWorkspace"`;

/** The limits {@link INVOCATION_RUN_LIMITS_TEXT} read into a row. */
export function runLimitsOfRow(row: Record<string, unknown>): RunLimits {
  const of = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return { project: of(row.limitProject), workspace: of(row.limitWorkspace) };
}

/** Runs in progress in the project and in its workspace (the workspace count only when `withWorkspace`). */
export async function countRunsInProgress(
  sql: Sql,
  projectId: string,
  workspaceId: string,
  withWorkspace = true,
): Promise<RunsInProgress> {
  const rows = await sql.rows<RunsInProgress>({
    name: 'run_limits_in_progress',
    text: `SELECT
        (SELECT count(*)::int FROM invocations WHERE project_id = $1 AND state = ANY($3::text[])) AS project,
        CASE WHEN $4::boolean
          THEN (SELECT count(*)::int FROM invocations WHERE workspace_id = $2 AND state = ANY($3::text[]))
          ELSE 0 END AS workspace`,
    values: [projectId, workspaceId, [...RUN_IN_PROGRESS_STATES], withWorkspace],
  });
  return rows[0]!;
}

/** The project's launched invocations waiting for a run slot. */
export function countQueuedInvocations(db: Pick<Db, 'invocation'>, projectId: string): Promise<number> {
  return db.invocation.count({ where: { projectId, queuedAt: { not: null }, state: 'launching' } });
}

/**
 * The run limit a run starting now would wait on (the project's, then the workspace's when `workspaceId` is
 * known), or null. Read without a lock (preflight, launch, the reconcile's plan): the engine decides again
 * under its lock when the run would start.
 */
export async function runLimitReachedNow(
  db: Sql,
  projectId: string,
  workspaceId: string | undefined,
): Promise<Blocker | null> {
  const limits = await loadRunLimits(db, projectId, workspaceId ?? projectId);
  return runLimitReachedUnder(db, limits, projectId, workspaceId);
}

/** {@link runLimitReachedNow} with the limits already read (no statement at all when none is set). */
export async function runLimitReachedUnder(
  db: Sql,
  limits: RunLimits,
  projectId: string,
  workspaceId: string | undefined,
): Promise<Blocker | null> {
  if (limits.project === null && limits.workspace === null) return null;
  const inProgress = await countRunsInProgress(
    db,
    projectId,
    workspaceId ?? projectId,
    limits.workspace !== null,
  );
  return reachedRunLimit(limits, inProgress);
}
