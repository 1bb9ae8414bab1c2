import { Queue } from 'bullmq';
import { createHubInternalClient, workflowWorkerDocument } from '@svc/contracts';
import type { HubInternalClient, WorkflowWorkerApi } from '@svc/contracts';
import { checkDatabase } from '@svc/db-kit';
import {
  checkRedis,
  createHttpApp,
  createQueueMetrics,
  livenessHandler,
  mountOperations,
  readinessHandler,
  redisConnectionOptions,
  startWorker,
  subscribeCredentialNotices,
} from '@svc/service-kit';
import type {
  Logger,
  ManagedWorker,
  OperationHandlers,
  Redis,
  Registry,
  WorkerDefinition,
} from '@svc/service-kit';
import type { Express } from 'express';
import { createWorkflowDeps } from './app';
import { createDeliveryRateLimiter } from './data/delivery-rate.limiter';
import { DELIVERY_QUEUE, createDeliveryQueue } from './data/delivery.queue';
import { RECONCILE_QUEUE, createEngineQueue } from './data/reconcile.queue';
import type { Database } from './db';
import type { WorkflowDeps } from './deps';
import type { DeliverySettings } from './domain/delivery-settings';
import type { EngineSettings } from './domain/engine-settings';
import { createDeliveryMetrics, createSweeperMetrics } from './domain/workflow-metrics';
import { mountQueueDashboard } from './routes/queue-dashboard.routes';
import { DeliveryAgentPool } from './transport/http-sender';
import { DEFAULT_DELIVERY_CONCURRENCY, deliveryWorker } from './workers/delivery.worker';
import { reconcileWorker } from './workers/reconcile.worker';
import { startSweeper } from './workers/sweeper.worker';
import { nodeFetch } from '@svc/service-kit/node-fetch';

/** The queues this process consumes; every consumer calls the same use-cases the HTTP routes call. */
export function workerDefinitions(
  deps: WorkflowDeps,
  options: { concurrency?: number; deliveryConcurrency?: number } = {},
): WorkerDefinition<unknown, unknown>[] {
  return [
    reconcileWorker(deps, options.concurrency) as WorkerDefinition<unknown, unknown>,
    deliveryWorker(deps, options.deliveryConcurrency ?? DEFAULT_DELIVERY_CONCURRENCY) as WorkerDefinition<
      unknown,
      unknown
    >,
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
  /**
   * This process's metrics registry: queue depth, job durations and failures, delivery attempts and probe
   * requests are recorded in it, and the probe listener serves it at `/metrics`.
   */
  metrics?: Registry;
  /** The queue dashboard at `/queues` on the probe listener (off without an operator token). */
  queueDashboard?: { operatorToken: string | undefined; readOnly: boolean };
}

/** Starts every queue worker and the sweeper, and builds the probe app of the worker process. */
export function startWorkerProcess(options: WorkerProcessOptions): {
  app: Express;
  workers: ManagedWorker[];
  deps: WorkflowDeps;
  /** Resolves once the roster notices are listened to (decision 105). */
  noticesReady: Promise<void>;
  close(): Promise<void>;
} {
  const connection = redisConnectionOptions(options.redisUrl);
  const hub =
    'url' in options.hub
      ? createHubInternalClient({
          baseUrl: options.hub.url,
          serviceToken: options.hub.serviceToken,
          clientName: 'workflow-worker',
          // Node's own HTTP client: half the CPU of the global fetch per hub call (see `nodeFetch`).
          fetch: nodeFetch(),
        })
      : options.hub;
  // Announcements and fair-share counts go over a connection of their own: BullMQ loads its scripts onto the
  // queues' connection, and ioredis copies every loaded script into each pipeline made on it.
  const publisher = options.redis.duplicate({
    lazyConnect: true,
    connectionName: 'workflow-worker-publisher',
  });
  const queue = createEngineQueue({
    connection: options.redis,
    publisher,
    prefix: options.queuePrefix,
    logger: options.logger,
  });
  const deliveries = createDeliveryQueue({
    connection: options.redis,
    prefix: options.queuePrefix,
    logger: options.logger,
  });
  // Handles on the consumed queues for counting and inspecting them (they share the process's connection).
  const watched =
    options.metrics || options.queueDashboard
      ? [RECONCILE_QUEUE, DELIVERY_QUEUE].map((name) => {
          const handle = new Queue(name, { connection: options.redis, prefix: options.queuePrefix });
          handle.on('error', (error) => options.logger.warn({ err: error, queue: name }, 'queue error'));
          return handle;
        })
      : [];
  const queueMetrics = options.metrics
    ? createQueueMetrics(options.metrics, { queues: watched, logger: options.logger })
    : undefined;
  const deps = createWorkflowDeps({
    database: options.database,
    logger: options.logger,
    engine: options.engine,
    delivery: options.delivery,
    hub,
    queue,
    deliveries,
    deliveryRate: createDeliveryRateLimiter(options.redis, options.queuePrefix),
    // As many connections per receiver as deliveries run at once: none waits for a socket of its own worker.
    deliveryAgents: new DeliveryAgentPool({
      maxSocketsPerAgent: options.deliveryConcurrency ?? DEFAULT_DELIVERY_CONCURRENCY,
    }),
    ...(options.metrics
      ? {
          deliveryMetrics: createDeliveryMetrics(options.metrics),
          sweeperMetrics: createSweeperMetrics(options.metrics),
        }
      : {}),
  });
  // The hub announces changes to its rosters; the rosters the reconcile keeps for that workspace go at once
  // (decision 105). Without the notice they last `engine.rosterMaxAgeMs`.
  const notices = subscribeCredentialNotices({
    subscriber: options.redis.duplicate({ lazyConnect: true, connectionName: 'workflow-worker-notices' }),
    prefix: options.queuePrefix,
    logger: options.logger,
    onNotice: (notice) => {
      if (notice.kind === 'roster_changed') deps.hubReads.forgetRosters(notice.workspace_id);
    },
  });
  const lockMs = options.jobLockMs ?? 30_000;
  const workers = (
    options.definitions ??
    workerDefinitions(deps, {
      concurrency: options.concurrency,
      deliveryConcurrency: options.deliveryConcurrency,
    })
  ).map((definition) => {
    const started = startWorker(queueMetrics ? queueMetrics.instrument(definition) : definition, {
      connection,
      prefix: options.queuePrefix,
      logger: options.logger,
      extra: {
        lockDuration: lockMs,
        stalledInterval: Math.max(250, Math.floor(lockMs / 2)),
        // A job whose worker died is retried, however often that happens; the work is idempotent.
        maxStalledCount: 1000,
      },
    });
    queueMetrics?.watch(started.worker);
    return started;
  });
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
    ...(options.metrics ? { metrics: { registry: options.metrics, serveRoute: true } } : {}),
    configure: (express) => {
      if (options.queueDashboard) {
        mountQueueDashboard(express, { ...options.queueDashboard, queues: watched, logger: options.logger });
      }
      mountOperations(express, { document: workflowWorkerDocument, handlers, logger: options.logger });
    },
  });
  options.logger.info({ queues: workers.map((w) => w.worker.name) }, 'workers started');
  return {
    app,
    workers,
    deps,
    noticesReady: notices.ready,
    close: async () => {
      await sweeper?.stop();
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([
        queue.close(),
        deliveries.close(),
        notices.close(),
        ...watched.map((handle) => handle.close()),
      ]);
      await publisher.quit().catch(() => publisher.disconnect());
      deps.deliveryAgents.close();
    },
  };
}
