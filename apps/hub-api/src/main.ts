import { createLogger, installShutdown, runMain, startHttpServer } from '@svc/service-kit';
import { createHub } from './app';
import { createDatabase } from './db';
import { loadHubConfig } from './env';

runMain('hub-api', async () => {
  const config = loadHubConfig();
  const logger = createLogger({ name: 'hub-api', level: config.LOG_LEVEL });
  const database = createDatabase(config.DATABASE_URL, { poolSize: config.HUB_DB_POOL_SIZE });
  const hub = await createHub({ database, settings: config, logger });
  const server = await startHttpServer(hub.app, { host: config.HUB_HOST, port: config.HUB_PORT, logger });
  installShutdown({
    logger,
    steps: [
      { name: 'http', close: () => server.close() },
      { name: 'signing-keys', close: async () => hub.stop() },
      { name: 'database', close: () => database.close() },
    ],
  });
});
