import { newId } from '@svc/service-kit';
import type { ReconcileJob } from '../../data/reconcile.queue';
import type { WorkflowDeps } from '../../deps';
import { ownerCheckAfterMs, ownerCheckEveryMs } from '../../domain/stage-owners';

const BATCH = 500;
/** Namespace of the advisory lock that lets one worker replica at a time pick the runs to check. */
const OWNER_CHECK_LOCK = [0x3f1c7, 1] as const;

/**
 * Runs whose current stage's owner has been silent for half the stall window get a reconcile, which asks the hub
 * whether the owner still runs and gives the stage to another owner when it does not (a host that died takes
 * its agents with it: the hub marks them lost). A run is picked at most once per {@link ownerCheckEveryMs}
 * (no reconcile of it pending or recent). One replica at a time picks, under a transaction-scoped advisory lock
 * taken with `try`, so several worker replicas never queue the same check twice; the reconcile itself is
 * idempotent under the invocation's row lock. Returns the jobs to enqueue (their outbox rows are committed).
 */
export async function checkSilentOwners(deps: WorkflowDeps): Promise<ReconcileJob[]> {
  const now = deps.now().getTime();
  const silentCut = new Date(now - ownerCheckAfterMs(deps.engine));
  const recentCut = new Date(now - ownerCheckEveryMs(deps.engine));
  return deps.db.$transaction(
    async (tx) => {
      const [lock] = await tx.$queryRaw<{ taken: boolean }[]>`
        SELECT pg_try_advisory_xact_lock(${OWNER_CHECK_LOCK[0]}::int4, ${OWNER_CHECK_LOCK[1]}::int4) AS taken`;
      if (!lock?.taken) return [];
      const silent = await tx.$queryRaw<{ invocation_id: string }[]>`
        SELECT DISTINCT s.invocation_id FROM run_stages s
        JOIN invocations i ON i.id = s.invocation_id
        WHERE s.state IN ('assigned', 'claimed', 'blocked') AND s.owner_agent_id IS NOT NULL
          AND COALESCE(s.last_heartbeat_at, s.assigned_at) < ${silentCut}
          AND i.state IN ('running', 'waiting_for_artifact')
          AND NOT EXISTS (
            SELECT 1 FROM workflow_outbox o
            WHERE o.invocation_id = s.invocation_id AND (o.processed_at IS NULL OR o.created_at >= ${recentCut}))
        LIMIT ${BATCH}`;
      const jobs = silent.map((row) => ({ outboxId: newId('obx'), invocationId: row.invocation_id }));
      if (jobs.length > 0) {
        await tx.outboxEntry.createMany({
          data: jobs.map((job) => ({
            id: job.outboxId,
            invocationId: job.invocationId,
            reason: 'owner_check',
          })),
        });
      }
      return jobs;
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
}
