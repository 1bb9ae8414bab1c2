import { DelayedError } from 'bullmq';
import { createHubInternalClient, workflowWorkerDocument } from '@svc/contracts';
import type { HubInternalClient, WorkflowWorkerApi } from '@svc/contracts';
import { checkDatabase } from '@svc/db-kit';
import {
  checkRedis,
  createHttpApp,
  livenessHandler,
  mountOperations,
  readinessHandler,
  redisConnectionOptions,
  startWorker,
  withDeadline,
} from '@svc/service-kit';
import type { Logger, ManagedWorker, OperationHandlers, Redis, WorkerDefinition } from '@svc/service-kit';
import type { Express } from 'express';
import { createWorkflowDeps } from './app';
import type { Database } from './db';
import type { WorkflowDeps } from './deps';
import { attemptDelivery } from './delivery/deliver';
import { dispatchDeliveries } from './delivery/events';
import { createDeliveryQueue, DELIVERY_QUEUE } from './delivery/queue';
import type { DeliveryJob } from './delivery/queue';
import type { DeliverySettings } from './delivery/settings';
import { createEngineQueue, RECONCILE_QUEUE } from './engine/queue';
import type { ReconcileJob } from './engine/queue';
import { reconcileInvocation } from './engine/reconcile';
import type { EngineSettings } from './engine/settings';
import { startSweeper } from './engine/sweeper';

/** Longest a reconcile job may take (its transaction alone is bounded at 30 s, plus 10 s to start). */
const RECONCILE_DEADLINE_MS = 45_000;

/**
 * The queues this process consumes; every definition calls the same use-cases the HTTP routes call.
 * `workflow-reconcile`: one job per outbox row, bringing one invocation's run up to date, then telling newly
 * assigned agents.
 */
export function workerDefinitions(
  deps: WorkflowDeps,
  options: { concurrency?: number; deliveryConcurrency?: number } = {},
): WorkerDefinition<unknown, unknown>[] {
  const reconcile: WorkerDefinition<ReconcileJob, void> = {
    queue: RECONCILE_QUEUE,
    concurrency: options.concurrency ?? 20,
    async processor(job) {
      // A reconcile that does not finish in time fails the job (retried with backoff) instead of holding it.
      const outcome = await withDeadline(
        reconcileInvocation(deps, job.data.invocationId),
        RECONCILE_DEADLINE_MS,
        `reconcile of ${job.data.invocationId}`,
      );
      await deps.queue.announceAssignments(outcome.assignedAgents);
      await dispatchDeliveries(deps.db, deps.deliveries, outcome.deliveryJobs);
    },
  };
  const deliver: WorkerDefinition<DeliveryJob, void> = {
    queue: DELIVERY_QUEUE,
    concurrency: options.deliveryConcurrency ?? 100,
    async processor(job, token) {
      const outcome = await attemptDelivery(deps, job.data.deliveryId, job.data.trigger);
      if (outcome.kind === 'retry') {
        // The same job (same id = delivery id) waits for its next attempt.
        await job.updateData({ deliveryId: job.data.deliveryId, trigger: 'scheduled' });
        await job.moveToDelayed(outcome.at.getTime(), token);
        throw new DelayedError();
      }
    },
  };
  return [reconcile as WorkerDefinition<unknown, unknown>, deliver as WorkerDefinition<unknown, unknown>];
}

export interface WorkerProcessOptions {
  database: Database;
  redis: Redis;
  redisUrl: string;
  queuePrefix: string;
  logger: Logger;
  hub: { url: string; serviceToken: string } | HubInternalClient;
  engine?: Partial<EngineSettings>;
  delivery?: Partial<DeliverySettings>;
  deliveryConcurrency?: number;
  /** Job lock: a job held by a dead worker is taken up again after about this long. */
  jobLockMs?: number;
  concurrency?: number;
  /** Run the sweeper in this process (default true). */
  sweeper?: boolean;
  definitions?: WorkerDefinition<unknown, unknown>[];
}

/** Starts every queue worker and the sweeper, and builds the probe app of the worker process. */
export function startWorkerProcess(options: WorkerProcessOptions): {
  app: Express;
  workers: ManagedWorker[];
  deps: WorkflowDeps;
  close(): Promise<void>;
} {
  const connection = redisConnectionOptions(options.redisUrl);
  const hub =
    'url' in options.hub
      ? createHubInternalClient({
          baseUrl: options.hub.url,
          serviceToken: options.hub.serviceToken,
          clientName: 'workflow-worker',
        })
      : options.hub;
  const queue = createEngineQueue({
    connection: options.redis,
    publisher: options.redis,
    prefix: options.queuePrefix,
    logger: options.logger,
  });
  const deliveries = createDeliveryQueue({
    connection: options.redis,
    prefix: options.queuePrefix,
    logger: options.logger,
  });
  const deps = createWorkflowDeps({
    database: options.database,
    logger: options.logger,
    engine: options.engine,
    delivery: options.delivery,
    hub,
    queue,
    deliveries,
  });
  const lockMs = options.jobLockMs ?? 30_000;
  const workers = (
    options.definitions ??
    workerDefinitions(deps, {
      concurrency: options.concurrency,
      deliveryConcurrency: options.deliveryConcurrency,
    })
  ).map((definition) =>
    startWorker(definition, {
      connection,
      prefix: options.queuePrefix,
      logger: options.logger,
      extra: {
        lockDuration: lockMs,
        stalledInterval: Math.max(250, Math.floor(lockMs / 2)),
        // A job whose worker died is retried, however often that happens; the work is idempotent.
        maxStalledCount: 1000,
      },
    }),
  );
  const sweeper = options.sweeper === false ? null : startSweeper(deps);
  const handlers: OperationHandlers<WorkflowWorkerApi.operations> = {
    workflowWorkerLiveness: livenessHandler(),
    workflowWorkerReadiness: readinessHandler({
      postgres: () => checkDatabase(options.database.pool),
      redis: () => checkRedis(options.redis),
    }),
  };
  const app = createHttpApp({
    logger: options.logger,
    configure: (express) =>
      mountOperations(express, { document: workflowWorkerDocument, handlers, logger: options.logger }),
  });
  options.logger.info({ queues: workers.map((w) => w.worker.name) }, 'workers started');
  return {
    app,
    workers,
    deps,
    close: async () => {
      await sweeper?.stop();
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([queue.close(), deliveries.close()]);
    },
  };
}
