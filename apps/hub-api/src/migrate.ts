import { ensureDatabase, migrate, withDatabase } from '@svc/db-kit';
import { createLogger, runMain } from '@svc/service-kit';
import { z } from 'zod';
import { loadConfig, envFields } from '@svc/service-kit';
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
  const name = new URL(config.DATABASE_URL).pathname.slice(1);
  if (await ensureDatabase(withDatabase(config.DATABASE_URL, 'postgres'), name))
    logger.info({ database: name }, 'database created');
  const result = await migrate({
    databaseUrl: config.DATABASE_URL,
    migrationsDir: MIGRATIONS_DIR,
    log: (msg, fields) => logger.info(fields ?? {}, msg),
  });
  logger.info({ applied: result.applied, already_applied: result.alreadyApplied.length }, 'migrations done');
});
