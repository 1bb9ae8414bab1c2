import { migrateDatabase } from '@svc/db-kit';
import { createLogger, envFields, loadConfig, runMain } from '@svc/service-kit';
import { z } from 'zod';
import { MIGRATIONS_DIR } from './app';

/** Creates the hub database when missing and applies pending migrations (`node dist/migrate.js`). */
runMain('hub-api migrate', async () => {
  const config = loadConfig(
    'hub-api migrate',
    z.object({
      DATABASE_URL: envFields.postgresUrl().default('postgresql://postgres@127.0.0.1:5432/svc_hub'),
      LOG_LEVEL: envFields.logLevel(),
    }),
  );
  const logger = createLogger({ name: 'hub-api-migrate', level: config.LOG_LEVEL });
  const result = await migrateDatabase({
    databaseUrl: config.DATABASE_URL,
    migrationsDir: MIGRATIONS_DIR,
    log: (msg, fields) => logger.info(fields ?? {}, msg),
  });
  logger.info(
    { created: result.created, applied: result.applied, already_applied: result.alreadyApplied.length },
    'migrations done',
  );
});
