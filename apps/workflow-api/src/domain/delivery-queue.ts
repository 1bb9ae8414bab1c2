import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import { currentTraceparent } from '@svc/service-kit';
import type { Logger, Redis } from '@svc/service-kit';
import { jobTraces } from './invocation-trace';
import type { JobTrace } from './invocation-trace';

/** One job per delivery; the job id is the delivery id, so enqueuing a delivery twice is harmless. */
export const DELIVERY_QUEUE = 'workflow-delivery';

export type DeliveryTrigger = 'scheduled' | 'manual' | 'replay';

export interface DeliveryJob {
  deliveryId: string;
  trigger: DeliveryTrigger;
  /** The invocation whose event it delivers (when known): its attempts continue the invocation's trace. */
  invocationId?: string;
}

/** A delivery job's data: the ids, and (while tracing is on) the trace its attempts continue. */
export type DeliveryJobData = Omit<DeliveryJob, 'invocationId'> & JobTrace;

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
  let queue: Queue<DeliveryJobData> | undefined;
  const open = () => {
    if (!queue) {
      queue = new Queue<DeliveryJobData>(DELIVERY_QUEUE, {
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
            const traceparent = currentTraceparent();
            await existing.updateData({
              deliveryId: job.deliveryId,
              trigger: job.trigger,
              ...(traceparent ? { traceparent } : {}),
            });
            await existing.promote();
          }
        }
        const traces = await jobTraces(
          typeof (options.connection as Redis).mget === 'function'
            ? (options.connection as Redis)
            : undefined,
          options.prefix,
          jobs.map((job) => job.invocationId),
          options.logger,
        );
        await q.addBulk(
          jobs.map((job, i) => ({
            name: 'deliver',
            data: { deliveryId: job.deliveryId, trigger: job.trigger, ...traces[i] },
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
