import { runMigrateCommand } from '@svc/service-kit';
import { MIGRATIONS_DIR } from './app';

/** `node dist/migrate.js`: creates the svc_workflow database when missing and applies pending migrations. */
runMigrateCommand({
  appName: 'workflow-api',
  defaultDatabaseUrl: 'postgresql://postgres@127.0.0.1:5432/svc_workflow',
  migrationsDir: MIGRATIONS_DIR,
});
