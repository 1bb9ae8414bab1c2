import { migrateDatabase } from '@svc/db-kit';
import { z } from 'zod';
import { envFields, loadConfig } from './env';
import { createLogger } from './logger';
import { runMain } from './main';

/**
 * The `node dist/migrate.js` entry of a database-owning service: creates its database when missing and
 * applies pending migrations. Reads `DATABASE_URL` (default given) and `LOG_LEVEL`.
 */
export function runMigrateCommand(options: {
  appName: string;
  defaultDatabaseUrl: string;
  migrationsDir: string;
}): void {
  const name = `${options.appName} migrate`;
  runMain(name, async () => {
    const config = loadConfig(
      name,
      z.object({
        DATABASE_URL: envFields.postgresUrl().default(options.defaultDatabaseUrl),
        LOG_LEVEL: envFields.logLevel(),
      }),
    );
    const logger = createLogger({ name: `${options.appName}-migrate`, level: config.LOG_LEVEL });
    const result = await migrateDatabase({
      databaseUrl: config.DATABASE_URL,
      migrationsDir: options.migrationsDir,
      log: (msg, fields) => logger.info(fields ?? {}, msg),
    });
    logger.info(
      { created: result.created, applied: result.applied, already_applied: result.alreadyApplied.length },
      'migrations done',
    );
  });
}
