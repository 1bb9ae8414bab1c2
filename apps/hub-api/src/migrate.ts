import { runMigrateCommand } from '@svc/service-kit';
import { MIGRATIONS_DIR } from './app';

/** `node dist/migrate.js`: creates the svc_hub database when missing and applies pending migrations. */
runMigrateCommand({
  appName: 'hub-api',
  defaultDatabaseUrl: 'postgresql://postgres@127.0.0.1:5432/svc_hub',
  migrationsDir: MIGRATIONS_DIR,
});
