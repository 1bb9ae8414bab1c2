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
  /**
   * The invocation's project, for a job that starts a run (launch, approval): such jobs take their turn by
   * project ({@link fairPriorityKey}). Jobs without one move runs already started and go first.
   */
  projectId?: string;
}

/** Highest BullMQ priority number (the lowest priority). */
const PRIORITY_LIMIT = 2 ** 21 - 1;
/** A project's count of waiting run-starting jobs is forgotten this long after its last enqueue. */
const FAIR_COUNT_TTL_S = 600;

/**
 * Redis key counting a project's run-starting reconcile jobs not finished yet. Each such job is enqueued with
 * that count as its BullMQ priority (lower first, FIFO within a priority), so the n-th waiting job of every
 * project has the same turn: a project that launches a thousand runs at once takes turns with one that
 * launches one at a time instead of queueing it behind the thousand (decision 88).
 */
export function fairPriorityKey(prefix: string, projectId: string): string {
  return `${prefix}:workflow:fair:${projectId}`;
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
  /** A run-starting job of the project finished: the project's later jobs move up a turn. */
  finishedFairJob(projectId: string): Promise<void>;
  /** After a commit that may have changed invocations: wakes the requests waiting on them (`?wait=`). */
  announceInvocationChanges(invocationIds: string[]): Promise<void>;
  /** Both announcements of one commit in one round trip to Redis. */
  announce(changes: { assignedAgents: string[]; invocationIds: string[] }): Promise<void>;
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
  /** Each run-starting job's turn in its project (0: none, a job that goes first). */
  async function fairPriorities(jobs: ReconcileJob[]): Promise<number[]> {
    if (!jobs.some((job) => job.projectId)) return jobs.map(() => 0);
    const pipeline = options.publisher.pipeline();
    for (const job of jobs) {
      if (!job.projectId) continue;
      const key = fairPriorityKey(options.prefix, job.projectId);
      pipeline.incr(key);
      pipeline.expire(key, FAIR_COUNT_TTL_S);
    }
    const answers = (await pipeline.exec()) ?? [];
    let at = 0;
    return jobs.map((job) => {
      if (!job.projectId) return 0;
      const count = Number(answers[at]?.[1] ?? 1);
      at += 2;
      return Math.min(PRIORITY_LIMIT, Math.max(1, count));
    });
  }
  const channel = assignmentChannel(options.prefix);
  const changes = invocationChangeChannel(options.prefix);
  /** Publishes every announcement in one pipeline; a failure is logged (agents poll, waits re-read). */
  async function announce(agentIds: string[], invocationIds: string[]): Promise<void> {
    const agents = [...new Set(agentIds)];
    const invocations = [...new Set(invocationIds)];
    if (agents.length + invocations.length === 0) return;
    try {
      const pipeline = options.publisher.pipeline();
      for (const agentId of agents) pipeline.publish(channel, agentId);
      for (const invocationId of invocations) pipeline.publish(changes, invocationId);
      const answers = (await pipeline.exec()) ?? [];
      const failed = answers.find(([error]) => error);
      if (failed) throw failed[0];
    } catch (error) {
      options.logger.warn(
        { err: error, agents: agents.length, invocations: invocations.length },
        'announcement failed; agents poll and waits re-read',
      );
    }
  }
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
        const priorities = await fairPriorities(jobs);
        await open().addBulk(
          jobs.map((job, i) => ({
            name: 'reconcile',
            data: {
              outboxId: job.outboxId,
              invocationId: job.invocationId,
              ...(job.projectId ? { projectId: job.projectId } : {}),
              ...traces[i],
            },
            opts: {
              jobId: job.outboxId,
              ...(priorities[i] ? { priority: priorities[i] } : {}),
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
    async finishedFairJob(projectId) {
      try {
        const key = fairPriorityKey(options.prefix, projectId);
        // Never below zero: a count lost with its key (expiry, a Redis flush) starts again from nothing.
        await options.publisher.eval(
          "local n = redis.call('DECR', KEYS[1]) if n <= 0 then redis.call('DEL', KEYS[1]) end return n",
          1,
          key,
        );
      } catch (error) {
        options.logger.warn({ err: error }, 'fair share count not lowered; it expires');
      }
    },
    async announceAssignments(agentIds) {
      await announce(agentIds, []);
    },
    async announceInvocationChanges(invocationIds) {
      await announce([], invocationIds);
    },
    async announce(changes) {
      await announce(changes.assignedAgents, changes.invocationIds);
    },
    async close() {
      await queue?.close();
    },
  };
}
