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
} from '@svc/service-kit';
import type { Logger, ManagedWorker, OperationHandlers, Redis, WorkerDefinition } from '@svc/service-kit';
import type { Express } from 'express';
import { createWorkflowDeps } from './app';
import type { Database } from './db';
import type { WorkflowDeps } from './deps';
import { createDeliveryQueue } from './domain/delivery-queue';
import type { DeliverySettings } from './domain/delivery-settings';
import type { EngineSettings } from './domain/engine-settings';
import { createEngineQueue } from './domain/reconcile-queue';
import { deliveryWorker } from './workers/delivery.worker';
import { reconcileWorker } from './workers/reconcile.worker';
import { startSweeper } from './workers/sweeper.worker';

/** The queues this process consumes; every consumer calls the same use-cases the HTTP routes call. */
export function workerDefinitions(
  deps: WorkflowDeps,
  options: { concurrency?: number; deliveryConcurrency?: number } = {},
): WorkerDefinition<unknown, unknown>[] {
  return [
    reconcileWorker(deps, options.concurrency) as WorkerDefinition<unknown, unknown>,
    deliveryWorker(deps, options.deliveryConcurrency) as WorkerDefinition<unknown, unknown>,
  ];
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
      deps.deliveryAgents.close();
    },
  };
}
