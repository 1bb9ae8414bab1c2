import {
  createLogger,
  createMetricsRegistry,
  registerDatabaseMetrics,
  createRedis,
  installShutdown,
  runMain,
  startHttpServer,
  startOptionalMetricsListener,
  startTracing,
} from '@svc/service-kit';
import { createWorkflowService } from './app';
import { createDatabase } from './db';
import { admissionSettingsOf, deliverySettingsOf, engineSettingsOf, loadWorkflowConfig } from './env';

runMain('workflow-api', async () => {
  const config = loadWorkflowConfig();
  const logger = createLogger({ name: 'workflow-api', level: config.LOG_LEVEL });
  const tracing = startTracing({ serviceName: 'workflow-api', logger });
  const database = createDatabase(config.DATABASE_URL, { poolSize: config.WORKFLOW_DB_POOL_SIZE });
  const redis = createRedis(config.REDIS_URL, { name: 'workflow-api' });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  const registry = createMetricsRegistry('workflow-api');
  registerDatabaseMetrics(registry, database.pool);
  const metricsPort = config.WORKFLOW_METRICS_PORT;
  const service = createWorkflowService({
    database,
    redis,
    logger,
    publicUrl: config.WORKFLOW_PUBLIC_URL,
    hub: {
      url: config.HUB_URL,
      serviceToken: config.HUB_SERVICE_TOKEN,
      ...(config.HUB_ISSUER ? { issuer: config.HUB_ISSUER } : {}),
    },
    agentStandingTtlMs: config.WORKFLOW_AGENT_RECHECK_MS,
    queuePrefix: config.WORKFLOW_QUEUE_PREFIX,
    engine: engineSettingsOf(config),
    delivery: deliverySettingsOf(config),
    bodyLimit: config.WORKFLOW_BODY_LIMIT,
    admission: admissionSettingsOf(config),
    metrics: { registry, serveRoute: metricsPort === undefined },
  });
  const server = await startHttpServer(service.app, {
    host: config.WORKFLOW_HOST,
    port: config.WORKFLOW_PORT,
    logger,
  });
  const metricsSteps = await startOptionalMetricsListener(registry, {
    host: config.WORKFLOW_HOST,
    port: metricsPort,
    logger,
  });
  installShutdown({
    logger,
    steps: [
      { name: 'http', close: () => server.close() },
      ...metricsSteps,
      { name: 'queues', close: () => service.close() },
      { name: 'redis', close: async () => void (await redis.quit().catch(() => redis.disconnect())) },
      { name: 'database', close: () => database.close() },
      { name: 'traces', close: () => tracing.shutdown() },
    ],
  });
});
