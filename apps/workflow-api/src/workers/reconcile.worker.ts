import type { WorkerDefinition } from '@svc/service-kit';
import { RECONCILE_QUEUE } from '../data/reconcile.queue';
import type { ReconcileJob } from '../data/reconcile.queue';
import type { WorkflowDeps } from '../deps';
import { reconcileInvocation } from '../use-cases/engine/reconcile-invocation';

/** Longest a reconcile job may take (its transaction alone is bounded at 30 s, plus 10 s to start). */
const RECONCILE_DEADLINE_MS = 45_000;

/**
 * `workflow-reconcile`: one job per outbox row, bringing one invocation's run up to date, then telling newly
 * assigned agents and enqueueing the deliveries it recorded.
 */
export function reconcileWorker(deps: WorkflowDeps, concurrency = 20): WorkerDefinition<ReconcileJob, void> {
  return {
    queue: RECONCILE_QUEUE,
    concurrency,
    async processor(job) {
      await reconcileInvocation(deps, job.data.invocationId, RECONCILE_DEADLINE_MS);
      // A run-starting job gives up its turn once done (one that fails keeps it until its retries end or the
      // count expires).
      if (job.data.projectId) await deps.queue.finishedFairJob(job.data.projectId);
    },
  };
}
