import type * as BullMq from 'bullmq';
import type { ConnectionOptions, Job, Worker, WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import { SpanKind, inSpan, tracingEnabled } from './tracing';

export interface WorkerDefinition<Data, Result = void> {
  /** Queue name. */
  queue: string;
  /** `token` is the job's lock token (needed to reschedule the job itself, e.g. `job.moveToDelayed`). */
  processor: (job: Job<Data, Result>, token?: string) => Promise<Result>;
  concurrency?: number;
}

export interface ManagedWorker {
  worker: Worker;
  /** Waits for the jobs in hand to finish, then disconnects. */
  close(): Promise<void>;
}

/**
 * A BullMQ worker with the platform's defaults: structured logs of failures (secrets redacted by the
 * logger), a key prefix per deployment, and a close that lets running jobs finish.
 */
export function startWorker<Data, Result = void>(
  definition: WorkerDefinition<Data, Result>,
  options: {
    /** Connection options (see `redisConnectionOptions`): the worker opens and closes its own connections. */
    connection: ConnectionOptions;
    prefix?: string;
    logger: Logger;
    extra?: Partial<WorkerOptions>;
  },
): ManagedWorker {
  const log = options.logger.child({ queue: definition.queue });
  // Loaded here, not at the top: processes that import the kit without running a worker never load BullMQ.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Worker } = require('bullmq') as typeof BullMq;
  const worker = new Worker<Data, Result>(
    definition.queue,
    (job, token) =>
      tracingEnabled()
        ? inSpan(
            `${definition.queue} process`,
            {
              kind: SpanKind.CONSUMER,
              // The trace of the request or job that enqueued it (its data carries a `traceparent`).
              traceparent: (job.data as { traceparent?: unknown } | undefined)?.traceparent ?? null,
              // What caused the job when it continues another trace (e.g. the invocation's).
              links: [(job.data as { traceLink?: unknown } | undefined)?.traceLink],
              attributes: {
                'messaging.system': 'bullmq',
                'messaging.operation.type': 'process',
                'messaging.destination.name': definition.queue,
                'messaging.message.id': String(job.id),
                'svc.job.attempt': job.attemptsMade + 1,
              },
              // A job that moves itself to a later attempt (DelayedError) has not failed.
              isFailure: (error) => (error as Error | undefined)?.name !== 'DelayedError',
            },
            () => definition.processor(job, token),
          )
        : definition.processor(job, token),
    {
      connection: options.connection,
      concurrency: definition.concurrency ?? 10,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      ...options.extra,
    },
  );
  worker.on('failed', (job, error) => {
    log.warn({ job_id: job?.id, attempts: job?.attemptsMade, err: error }, 'job failed');
  });
  worker.on('error', (error) => log.error({ err: error }, 'worker error'));
  let closing: Promise<void> | undefined;
  return {
    worker,
    close() {
      closing ??= worker.close();
      return closing;
    },
  };
}
