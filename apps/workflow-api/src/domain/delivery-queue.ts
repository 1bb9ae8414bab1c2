import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import { withTraceparent } from '@svc/service-kit';
import type { Logger, Redis } from '@svc/service-kit';

/** One job per delivery; the job id is the delivery id, so enqueuing a delivery twice is harmless. */
export const DELIVERY_QUEUE = 'workflow-delivery';

export type DeliveryTrigger = 'scheduled' | 'manual' | 'replay';

export interface DeliveryJob {
  deliveryId: string;
  trigger: DeliveryTrigger;
  /** W3C trace context of what recorded or asked for the delivery (while tracing is on): its attempts continue it. */
  traceparent?: string;
}

export interface DeliveryQueue {
  /** Enqueues (or, for an attempt asked for now, promotes a waiting delayed job); false when Redis refused. */
  enqueue(jobs: (DeliveryJob & { delayMs?: number })[]): Promise<boolean>;
  close(): Promise<void>;
}

export function createDeliveryQueue(options: {
  connection: Redis | ConnectionOptions;
  prefix: string;
  logger: Logger;
}): DeliveryQueue {
  let queue: Queue<DeliveryJob> | undefined;
  const open = () => {
    if (!queue) {
      queue = new Queue<DeliveryJob>(DELIVERY_QUEUE, {
        connection: options.connection,
        prefix: options.prefix,
      });
      queue.on('error', (error) => options.logger.warn({ err: error }, 'delivery queue error'));
    }
    return queue;
  };
  return {
    async enqueue(jobs) {
      if (jobs.length === 0) return true;
      try {
        const q = open();
        const manual = jobs.filter((j) => j.trigger !== 'scheduled');
        // A manual attempt must not wait behind a retry already scheduled for later: promote that job.
        for (const job of manual) {
          const existing = await q.getJob(job.deliveryId);
          if (existing && (await existing.isDelayed())) {
            await existing.updateData(withTraceparent({ deliveryId: job.deliveryId, trigger: job.trigger }));
            await existing.promote();
          }
        }
        await q.addBulk(
          jobs.map((job) => ({
            name: 'deliver',
            data: withTraceparent({ deliveryId: job.deliveryId, trigger: job.trigger }),
            opts: {
              jobId: job.deliveryId,
              ...(job.delayMs && job.delayMs > 0 ? { delay: job.delayMs } : {}),
              removeOnComplete: true,
              removeOnFail: true,
            },
          })),
        );
        return true;
      } catch (error) {
        options.logger.warn(
          { err: error, jobs: jobs.length },
          'delivery enqueue failed; the sweeper will retry',
        );
        return false;
      }
    },
    async close() {
      await queue?.close();
    },
  };
}
