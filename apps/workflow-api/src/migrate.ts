import { migrateDatabase } from '@svc/db-kit';
import { createLogger, envFields, loadConfig, runMain } from '@svc/service-kit';
import { z } from 'zod';
import { MIGRATIONS_DIR } from './app';

/** Creates the workflow database when missing and applies pending migrations (`node dist/migrate.js`). */
runMain('workflow-api migrate', async () => {
  const config = loadConfig(
    'workflow-api migrate',
    z.object({
      DATABASE_URL: envFields.postgresUrl().default('postgresql://postgres@127.0.0.1:5432/svc_workflow'),
      LOG_LEVEL: envFields.logLevel(),
    }),
  );
  const logger = createLogger({ name: 'workflow-api-migrate', level: config.LOG_LEVEL });
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
