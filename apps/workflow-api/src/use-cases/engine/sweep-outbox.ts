import { newId } from '@svc/service-kit';
import type { ReconcileJob } from '../../data/reconcile.queue';
import type { WorkflowDeps } from '../../deps';
import { newDeliverySweepState, sweepDeliveries } from '../delivery/sweep-deliveries';
import type { DeliverySweepState } from '../delivery/sweep-deliveries';
import { checkSilentOwners } from './check-silent-owners';
import { closeStageHandoffs } from './close-stage-handoffs';
import { wakeQueuedLaunches } from './wake-queued-launches';

const BATCH = 500;
/** Rows never enqueued get this long for the writer's own enqueue before the sweeper steps in. */
const FIRST_ENQUEUE_GRACE_MS = 1_000;
/** Processed outbox rows are kept this long (for inspection), then deleted. */
const OUTBOX_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * Rows past their retention are deleted at most this often: a day's retention does not need a delete every
 * pass (two statements each), and a pass under load is then spent on the work that moves runs.
 */
const RETENTION_EVERY_MS = 60_000;

/** What one sweeper keeps between its passes (in memory). */
export interface SweepState {
  deliveries: DeliverySweepState;
  /** When this sweeper last deleted rows past their retention (ms; 0: never, so its first pass does). */
  retainedAt: number;
}

export function newSweepState(): SweepState {
  return { deliveries: newDeliverySweepState(), retainedAt: 0 };
}

export interface SweepResult {
  /** Outbox rows whose job was lost (Redis flushed, enqueue failed, worker died) and were enqueued again. */
  requeued: number;
  /**
   * Launching or running invocations nobody touched for a while, reconciled again (owners, stalls), launched
   * ones past their run deadline (the reconcile fails them), and launches queued by a run limit with a slot
   * free now.
   */
  rechecked: number;
  /** Pending deliveries whose job the queue no longer held, enqueued again. */
  deliveries: number;
  /** Stage handoffs cancelled at the hub on a retry (the first attempt after the commit did not get through). */
  handoffs: number;
  /** Runs whose stage owner went silent, reconciled to ask the hub whether the owner still runs. */
  ownerChecks: number;
}

/**
 * One pass of the sweeper. Redis is not the source of truth: whatever the queue lost is found here in Postgres
 * and enqueued again with the same job id, and runs waiting on time (a stalled owner, no owner available yet)
 * get a fresh reconcile; stage handoffs the hub has not confirmed closed are cancelled again. Safe to run in every
 * worker replica at once.
 */
export async function sweepOnce(deps: WorkflowDeps, state: SweepState): Promise<SweepResult> {
  const now = deps.now().getTime();
  const lost = await deps.db.outboxEntry.findMany({
    where: {
      processedAt: null,
      OR: [
        { enqueuedAt: null, createdAt: { lt: new Date(now - FIRST_ENQUEUE_GRACE_MS) } },
        { enqueuedAt: { lt: new Date(now - deps.engine.outboxRedeliverMs) } },
      ],
    },
    orderBy: { createdAt: 'asc' },
    take: BATCH,
    select: { id: true, invocationId: true },
  });
  const cut = new Date(now - deps.engine.recheckMs);
  const idle = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT i.id FROM invocations i
    WHERE ((i.state IN ('launching', 'running') AND i.updated_at < ${cut} AND i.queued_at IS NULL)
        OR (i.deadline_at < ${new Date(now)} AND i.state IN ('launching', 'running', 'waiting_for_artifact')))
      AND NOT EXISTS (
        SELECT 1 FROM workflow_outbox o
        WHERE o.invocation_id = i.id AND (o.processed_at IS NULL OR o.created_at >= ${cut}))
    ORDER BY i.updated_at
    LIMIT ${BATCH}`;
  const fresh: ReconcileJob[] = idle.map((row) => ({ outboxId: newId('obx'), invocationId: row.id }));
  if (fresh.length > 0) {
    await deps.db.outboxEntry.createMany({
      data: fresh.map((job) => ({ id: job.outboxId, invocationId: job.invocationId, reason: 'sweep' })),
    });
  }
  // Launches queued by a run limit whose project now has a free slot (never rechecked otherwise).
  const woken = await wakeQueuedLaunches(deps);
  const ownerChecks = await checkSilentOwners(deps);
  const jobs = [
    ...lost.map((row) => ({ outboxId: row.id, invocationId: row.invocationId })),
    ...fresh,
    ...woken,
    ...ownerChecks,
  ];
  if (jobs.length > 0 && (await deps.queue.enqueue(jobs))) {
    await deps.db.outboxEntry.updateMany({
      where: { id: { in: jobs.map((j) => j.outboxId) }, processedAt: null },
      data: { enqueuedAt: new Date(now), attempts: { increment: 1 } },
    });
  }
  // Deliveries whose job the queue lost (their rows wait, the queue no longer holds them).
  const deliveries = await sweepDeliveries(deps, state.deliveries);
  // Stage handoffs the hub has not confirmed closed yet (it was down, or the process died after the commit).
  const handoffs = await closeStageHandoffs(deps);
  if (now - state.retainedAt >= RETENTION_EVERY_MS) {
    await deps.db.outboxEntry.deleteMany({
      where: { processedAt: { lt: new Date(now - OUTBOX_RETENTION_MS) } },
    });
    await deps.db.handoffClosure.deleteMany({
      where: { closedAt: { lt: new Date(now - OUTBOX_RETENTION_MS) } },
    });
    state.retainedAt = now;
  }
  return {
    requeued: lost.length,
    rechecked: fresh.length + woken.length,
    deliveries: deliveries.requeued,
    handoffs: handoffs.closed,
    ownerChecks: ownerChecks.length,
  };
}
