import { DelayedError } from 'bullmq';
import type { WorkerDefinition } from '@svc/service-kit';
import { DELIVERY_QUEUE } from '../data/delivery.queue';
import type { DeliveryJob } from '../data/delivery.queue';
import type { WorkflowDeps } from '../deps';
import { attemptDelivery } from '../use-cases/delivery/attempt-delivery';

/** Deliveries one worker process attempts at once (`WORKFLOW_DELIVERY_CONCURRENCY` sets it). */
export const DEFAULT_DELIVERY_CONCURRENCY = 200;

/** `workflow-delivery`: one job per delivery; a failed attempt reschedules the same job (same id). */
export function deliveryWorker(
  deps: WorkflowDeps,
  concurrency = DEFAULT_DELIVERY_CONCURRENCY,
): WorkerDefinition<DeliveryJob, void> {
  return {
    queue: DELIVERY_QUEUE,
    concurrency,
    async processor(job, token) {
      const outcome = await attemptDelivery(deps, job.data.deliveryId, job.data.trigger, {
        ...(job.data.slotAt !== undefined ? { slotAt: job.data.slotAt } : {}),
      });
      if (outcome.kind === 'done') return;
      // The same job (same id = delivery id) waits: for its next attempt, or for its turn (order, rate limit).
      const { slotAt: _previous, ...data } = job.data;
      await job.updateData(
        outcome.kind === 'retry'
          ? { ...data, trigger: 'scheduled' }
          : { ...data, ...(outcome.slotAt !== undefined ? { slotAt: outcome.slotAt } : {}) },
      );
      await job.moveToDelayed(outcome.at.getTime(), token);
      throw new DelayedError();
    },
  };
}
