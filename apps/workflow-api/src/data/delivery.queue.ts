import { Queue } from 'bullmq';
import { currentTraceparent } from '@svc/service-kit';
import type { Logger, Redis } from '@svc/service-kit';
import { jobTraces } from './invocation-trace.store';
import type { JobTrace } from './invocation-trace.store';

/** One job per delivery; the job id is the delivery id, so enqueuing a delivery twice is harmless. */
export const DELIVERY_QUEUE = 'workflow-delivery';

export type DeliveryTrigger = 'scheduled' | 'manual' | 'replay';

export interface DeliveryJob {
  deliveryId: string;
  trigger: DeliveryTrigger;
  /** The invocation whose event it delivers (when known): its attempts continue the invocation's trace. */
  invocationId?: string;
  /**
   * The rate-limit slot (epoch ms) this job reserved before it was delayed to wait for it: the attempt uses it
   * instead of reserving another one.
   */
  slotAt?: number;
}

/** A delivery job's data: the ids, and (while tracing is on) the trace its attempts continue. */
export type DeliveryJobData = Omit<DeliveryJob, 'invocationId'> & JobTrace;

export interface DeliveryQueue {
  /** Enqueues (or, for an attempt asked for now, promotes a waiting delayed job); false when Redis refused. */
  enqueue(jobs: (DeliveryJob & { delayMs?: number })[]): Promise<boolean>;
  /**
   * The delivery ids among `ids` whose job the queue still holds (waiting, active or delayed: its job hash
   * exists), in one round trip. Jobs are removed when they finish, so a missing id has no job that will run.
   * Throws when Redis cannot answer.
   */
  held(ids: string[]): Promise<Set<string>>;
  /** Runs now the jobs among `ids` that wait delayed (an ordered subscription's next delivery); others as they are. */
  promote(ids: string[]): Promise<void>;
  close(): Promise<void>;
}

export function createDeliveryQueue(options: {
  connection: Redis;
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
          options.connection,
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
    async held(ids) {
      if (ids.length === 0) return new Set();
      const q = open();
      // The job's hash key (`<prefix>:<queue>:<job id>`), as BullMQ names it.
      const pipeline = options.connection.pipeline();
      for (const id of ids) pipeline.exists(q.toKey(id));
      const answers = (await pipeline.exec()) ?? [];
      const held = new Set<string>();
      answers.forEach(([error, exists], i) => {
        if (error) throw error;
        if (exists === 1) held.add(ids[i]!);
      });
      return held;
    },
    async promote(ids) {
      const q = open();
      for (const id of ids) {
        const job = await q.getJob(id);
        // A job that is not delayed (waiting, running) needs nothing; one that moved meanwhile refuses.
        if (job && (await job.isDelayed())) await job.promote().catch(() => undefined);
      }
    },
    async close() {
      await queue?.close();
    },
  };
}
