import type { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { withDeadline } from './health';
import type { WorkerDefinition } from './worker';

/** The job states reported by `svc_queue_jobs` (completed jobs are removed, so they are not counted). */
export const QUEUE_DEPTH_STATES = [
  'waiting',
  'prioritized',
  'delayed',
  'active',
  'waiting-children',
  'failed',
] as const;

/** Upper bounds (seconds) of the job duration histogram: 5 ms to 2 min. */
export const JOB_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export interface QueueMetrics {
  /** The same definition, its processor timed: outcome `completed`, `failed` or `rescheduled`. */
  instrument<Data, Result>(definition: WorkerDefinition<Data, Result>): WorkerDefinition<Data, Result>;
  /** Counts the jobs a worker finds stalled (their worker stopped renewing the lock, e.g. it died). */
  watch(worker: Worker): void;
}

/** BullMQ's errors that move a job instead of failing it, by class name (bullmq itself is not loaded here). */
const RESCHEDULES = new Set(['DelayedError', 'WaitingChildrenError', 'RateLimitError', 'WaitingError']);

/**
 * A processor that ends by moving its job (delay, wait for children, rate limit) has not failed. Matched by
 * name, so a process that never runs a worker (the hub, through the kit's index) does not load BullMQ.
 */
function isReschedule(error: unknown): boolean {
  return error instanceof Error && RESCHEDULES.has(error.constructor.name);
}

/**
 * Queue series of a worker process:
 * - `svc_queue_jobs{queue,state}`: jobs per state, read from Redis on each scrape (a handful of counts per
 *   queue, bounded by `timeoutMs`; a scrape while Redis is down drops the series rather than repeat stale
 *   values);
 * - `svc_queue_job_duration_seconds{queue,outcome}`: processor run time of each job attempt;
 * - `svc_queue_job_failures_total{queue}`: attempts that threw (BullMQ retries them while attempts remain);
 * - `svc_queue_jobs_stalled_total{queue}`: jobs taken back from a worker that stopped renewing its lock.
 */
export function createQueueMetrics(
  registry: Registry,
  options: { queues: Queue[]; logger: Logger; timeoutMs?: number },
): QueueMetrics {
  const timeoutMs = options.timeoutMs ?? 2_000;
  new Gauge({
    name: 'svc_queue_jobs',
    help: 'Jobs in each queue by state (waiting, prioritized, delayed, active, waiting-children, failed).',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const counts = await withDeadline(
          Promise.all(options.queues.map((queue) => queue.getJobCounts(...QUEUE_DEPTH_STATES))),
          timeoutMs,
          'reading the queue counts',
        );
        options.queues.forEach((queue, index) => {
          for (const state of QUEUE_DEPTH_STATES) {
            this.set({ queue: queue.name, state }, counts[index]?.[state] ?? 0);
          }
        });
      } catch (error) {
        options.logger.warn({ err: error }, 'queue counts unavailable for metrics');
      }
    },
  });
  const duration = new Histogram({
    name: 'svc_queue_job_duration_seconds',
    help: 'Processor run time of each job attempt, by queue and outcome (completed, failed, rescheduled).',
    labelNames: ['queue', 'outcome'] as const,
    buckets: JOB_DURATION_BUCKETS,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'svc_queue_job_failures_total',
    help: 'Job attempts whose processor threw, by queue (retried while attempts remain).',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  const stalled = new Counter({
    name: 'svc_queue_jobs_stalled_total',
    help: 'Jobs taken back from a worker that stopped renewing their lock, by queue.',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  for (const queue of options.queues) {
    failures.inc({ queue: queue.name }, 0);
    stalled.inc({ queue: queue.name }, 0);
  }

  return {
    instrument(definition) {
      const queue = definition.queue;
      return {
        ...definition,
        async processor(job, token) {
          const started = process.hrtime.bigint();
          const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
          try {
            const result = await definition.processor(job, token);
            duration.observe({ queue, outcome: 'completed' }, seconds());
            return result;
          } catch (error) {
            if (isReschedule(error)) {
              duration.observe({ queue, outcome: 'rescheduled' }, seconds());
            } else {
              duration.observe({ queue, outcome: 'failed' }, seconds());
              failures.inc({ queue });
            }
            throw error;
          }
        },
      };
    },
    watch(worker) {
      worker.on('stalled', () => stalled.inc({ queue: worker.name }));
    },
  };
}
