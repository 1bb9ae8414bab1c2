import { newId } from '@svc/service-kit';
import type { ReconcileJob } from '../../data/reconcile.queue';
import { countRunsInProgress, loadRunLimits } from '../../data/run-limits.lookups';
import type { WorkflowDeps } from '../../deps';
import { sqlOn } from '../../db';

/** Projects looked at per pass. */
const PROJECTS = 100;
/** Queued launches woken per project and pass at most. */
const PER_PROJECT = 100;

/**
 * Launches waiting for a run slot (`queued_at`) whose project and workspace have slots free now: the oldest
 * of each project, as many as there are free slots, get a reconcile (an outbox row, then the queue), which
 * starts the run if the slot is still free under the engine's lock. A queued launch is never rechecked
 * otherwise, so a long queue costs nothing while the limit holds; one not woken here (no slot) stays queued.
 * Returns the jobs to enqueue (their rows are written).
 */
export async function wakeQueuedLaunches(deps: WorkflowDeps): Promise<ReconcileJob[]> {
  const projects = await deps.db.$queryRaw<{ project_id: string; workspace_id: string }[]>`
    SELECT DISTINCT project_id, workspace_id FROM invocations
    WHERE queued_at IS NOT NULL AND state = 'launching'
    LIMIT ${PROJECTS}`;
  const jobs: ReconcileJob[] = [];
  for (const { project_id: projectId, workspace_id: workspaceId } of projects) {
    const sql = sqlOn(deps.pool);
    const limits = await loadRunLimits(sql, projectId, workspaceId);
    const inProgress = await countRunsInProgress(sql, projectId, workspaceId, limits.workspace !== null);
    const free = Math.min(
      limits.project === null ? PER_PROJECT : limits.project - inProgress.project,
      limits.workspace === null ? PER_PROJECT : limits.workspace - inProgress.workspace,
      PER_PROJECT,
    );
    if (free <= 0) continue;
    const next = await deps.db.$queryRaw<{ id: string }[]>`
      SELECT i.id FROM invocations i
      WHERE i.project_id = ${projectId} AND i.queued_at IS NOT NULL AND i.state = 'launching'
        AND NOT EXISTS (SELECT 1 FROM workflow_outbox o WHERE o.invocation_id = i.id AND o.processed_at IS NULL)
      ORDER BY i.queued_at, i.id
      LIMIT ${free}`;
    jobs.push(...next.map((row) => ({ outboxId: newId('obx'), invocationId: row.id, projectId })));
  }
  if (jobs.length > 0) {
    await deps.db.outboxEntry.createMany({
      data: jobs.map((job) => ({ id: job.outboxId, invocationId: job.invocationId, reason: 'sweep' })),
    });
  }
  return jobs;
}
