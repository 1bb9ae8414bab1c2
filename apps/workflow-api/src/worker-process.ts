import { workflowWorkerDocument } from '@svc/contracts';
import type { WorkflowWorkerApi } from '@svc/contracts';
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
import type { Database } from './db';

/**
 * The queues this process consumes. Each later feature (launch reconciliation, delivery, sweeper) adds its
 * definition here; every definition calls the same use-cases the HTTP routes call.
 */
export function workerDefinitions(): WorkerDefinition<unknown, unknown>[] {
  return [];
}

export interface WorkerProcessOptions {
  database: Database;
  redis: Redis;
  redisUrl: string;
  queuePrefix: string;
  logger: Logger;
  definitions?: WorkerDefinition<unknown, unknown>[];
}

/** Starts every queue worker and builds the probe app of the worker process. */
export function startWorkerProcess(options: WorkerProcessOptions): {
  app: Express;
  workers: ManagedWorker[];
  close(): Promise<void>;
} {
  const connection = redisConnectionOptions(options.redisUrl);
  const workers = (options.definitions ?? workerDefinitions()).map((definition) =>
    startWorker(definition, { connection, prefix: options.queuePrefix, logger: options.logger }),
  );
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
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
