import {
  createLogger,
  createRedis,
  createMetricsRegistry,
  registerDatabaseMetrics,
  installShutdown,
  runMain,
  startHttpServer,
  startOptionalMetricsListener,
  startTracing,
} from '@svc/service-kit';
import { createHubService } from './app';
import { createDatabase } from './db';
import { loadHubConfig } from './env';
import { startPresenceSweeper } from './workers/presence.worker';
import { startRuntimeEnvironmentBackfill } from './workers/runtime-environments-backfill.worker';

runMain('hub-api', async () => {
  const config = loadHubConfig();
  const logger = createLogger({ name: 'hub-api', level: config.LOG_LEVEL });
  const tracing = startTracing({ serviceName: 'hub-api', logger });
  const database = createDatabase(config.DATABASE_URL, { poolSize: config.HUB_DB_POOL_SIZE });
  const registry = createMetricsRegistry('hub-api');
  registerDatabaseMetrics(registry, database.pool);
  const metricsPort = config.HUB_METRICS_PORT;
  const redis = config.HUB_REDIS_URL ? createRedis(config.HUB_REDIS_URL, { name: 'hub-api' }) : undefined;
  const hub = await createHubService({
    database,
    settings: config,
    logger,
    ...(redis ? { notices: { redis, prefix: config.HUB_REDIS_PREFIX } } : {}),
    metrics: { registry, serveRoute: metricsPort === undefined },
  });
  const server = await startHttpServer(hub.app, { host: config.HUB_HOST, port: config.HUB_PORT, logger });
  hub.spawns.startSweeper();
  const metricsSteps = await startOptionalMetricsListener(registry, {
    host: config.HUB_HOST,
    port: metricsPort,
    logger,
  });
  const backfill = startRuntimeEnvironmentBackfill(hub.deps);
  const presence = startPresenceSweeper(hub.deps, config.HUB_PRESENCE_SWEEP_INTERVAL_SECONDS * 1000);
  installShutdown({
    logger,
    steps: [
      { name: 'http', close: () => server.close() },
      ...metricsSteps,
      { name: 'runtime-environment-backfill', close: async () => backfill.stop() },
      { name: 'agent-spawns', close: () => hub.spawns.stop() },
      { name: 'presence-sweep', close: () => presence.stop() },
      { name: 'signing-keys', close: async () => hub.stop() },
      { name: 'database', close: () => database.close() },
      ...(redis ? [{ name: 'redis', close: async () => void (await redis.quit()) }] : []),
      { name: 'traces', close: () => tracing.shutdown() },
    ],
  });
});
