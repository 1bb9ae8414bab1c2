import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import type { Logger, Redis } from '@svc/service-kit';
import { jobTraces } from './invocation-trace.store';
import type { JobTrace } from './invocation-trace.store';

/** The queue whose jobs reconcile invocations; one job per outbox row (job id = outbox row id). */
export const RECONCILE_QUEUE = 'workflow-reconcile';

export interface ReconcileJob {
  outboxId: string;
  invocationId: string;
}

/** A reconcile job's data: the ids, and (while tracing is on) the trace it continues. */
export type ReconcileJobData = ReconcileJob & JobTrace;

/** Channel on which the engine announces new stage assignments (message: the agent id). */
export function assignmentChannel(prefix: string): string {
  return `${prefix}:workflow:stage-assigned`;
}

/** Channel on which a change of an invocation's state or attention is announced (message: the invocation id). */
export function invocationChangeChannel(prefix: string): string {
  return `${prefix}:workflow:invocation-changed`;
}

/**
 * The engine's side of Redis: enqueue reconcile jobs and announce assignments. Redis is not the source of truth:
 * a failed enqueue or publish is logged and left to the sweeper (outbox rows) and to the agents' bounded
 * long-polls.
 */
export interface EngineQueue {
  enqueue(jobs: ReconcileJob[]): Promise<boolean>;
  announceAssignments(agentIds: string[]): Promise<void>;
  /** After a commit that may have changed invocations: wakes the requests waiting on them (`?wait=`). */
  announceInvocationChanges(invocationIds: string[]): Promise<void>;
  close(): Promise<void>;
}

export function createEngineQueue(options: {
  connection: Redis | ConnectionOptions;
  publisher: Redis;
  prefix: string;
  logger: Logger;
}): EngineQueue {
  // Opened on first use, so a process that never launches anything holds no queue connection.
  let queue: Queue<ReconcileJobData> | undefined;
  const open = () => {
    if (!queue) {
      queue = new Queue<ReconcileJobData>(RECONCILE_QUEUE, {
        connection: options.connection,
        prefix: options.prefix,
      });
      queue.on('error', (error) => options.logger.warn({ err: error }, 'reconcile queue error'));
    }
    return queue;
  };
  const channel = assignmentChannel(options.prefix);
  const changes = invocationChangeChannel(options.prefix);
  return {
    async enqueue(jobs) {
      if (jobs.length === 0) return true;
      try {
        const traces = await jobTraces(
          options.publisher,
          options.prefix,
          jobs.map((job) => job.invocationId),
          options.logger,
        );
        await open().addBulk(
          jobs.map((job, i) => ({
            name: 'reconcile',
            data: { outboxId: job.outboxId, invocationId: job.invocationId, ...traces[i] },
            opts: {
              jobId: job.outboxId,
              attempts: 8,
              backoff: { type: 'exponential', delay: 200 },
              // Freed ids let the sweeper enqueue a row again if Redis loses it or every attempt fails.
              removeOnComplete: true,
              removeOnFail: true,
            },
          })),
        );
        return true;
      } catch (error) {
        options.logger.warn({ err: error, jobs: jobs.length }, 'enqueue failed; the sweeper will retry');
        return false;
      }
    },
    async announceAssignments(agentIds) {
      for (const agentId of new Set(agentIds)) {
        try {
          await options.publisher.publish(channel, agentId);
        } catch (error) {
          options.logger.warn({ err: error }, 'assignment announcement failed; agents poll');
        }
      }
    },
    async announceInvocationChanges(invocationIds) {
      for (const invocationId of new Set(invocationIds)) {
        try {
          await options.publisher.publish(changes, invocationId);
        } catch (error) {
          options.logger.warn({ err: error }, 'invocation change announcement failed; waits re-read');
        }
      }
    },
    async close() {
      await queue?.close();
    },
  };
}
