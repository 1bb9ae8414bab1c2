import {
  createLogger,
  createMetricsRegistry,
  registerDatabaseMetrics,
  createRedis,
  installShutdown,
  runMain,
  startHttpServer,
  startTracing,
} from '@svc/service-kit';
import { createDatabase } from './db';
import { deliverySettingsOf, engineSettingsOf, loadWorkflowConfig, reconcileConcurrencyOf } from './env';
import { startWorkerProcess } from './worker';

/** Entry of the worker process (`node dist/worker-main.js`): queue consumers plus probe routes. */
runMain('workflow-worker', async () => {
  const config = loadWorkflowConfig();
  const logger = createLogger({ name: 'workflow-worker', level: config.LOG_LEVEL });
  const tracing = startTracing({ serviceName: 'workflow-worker', logger });
  const database = createDatabase(config.DATABASE_URL, {
    poolSize: config.WORKFLOW_DB_POOL_SIZE,
    applicationName: 'workflow-worker',
  });
  const redis = createRedis(config.REDIS_URL, { name: 'workflow-worker' });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  const metrics = createMetricsRegistry('workflow-worker');
  registerDatabaseMetrics(metrics, database.pool);
  const processHandle = startWorkerProcess({
    database,
    redis,
    redisUrl: config.REDIS_URL,
    queuePrefix: config.WORKFLOW_QUEUE_PREFIX,
    logger,
    hub: { url: config.HUB_URL, serviceToken: config.HUB_SERVICE_TOKEN },
    engine: engineSettingsOf(config),
    delivery: deliverySettingsOf(config),
    jobLockMs: config.WORKFLOW_JOB_LOCK_MS,
    concurrency: reconcileConcurrencyOf(config),
    deliveryConcurrency: config.WORKFLOW_DELIVERY_CONCURRENCY,
    metrics,
    queueDashboard: {
      operatorToken: config.SVC_OPERATOR_TOKEN,
      readOnly: config.WORKFLOW_QUEUE_DASHBOARD_READ_ONLY,
    },
  });
  const server = await startHttpServer(processHandle.app, {
    host: config.WORKFLOW_HOST,
    port: config.WORKFLOW_WORKER_PORT,
    logger,
  });
  installShutdown({
    logger,
    steps: [
      { name: 'workers', close: () => processHandle.close() },
      { name: 'http', close: () => server.close() },
      { name: 'redis', close: async () => void (await redis.quit().catch(() => redis.disconnect())) },
      { name: 'database', close: () => database.close() },
      { name: 'traces', close: () => tracing.shutdown() },
    ],
  });
});
