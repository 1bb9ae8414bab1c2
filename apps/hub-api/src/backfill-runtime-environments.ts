import { createLogger, envFields, loadConfig, runMain } from '@svc/service-kit';
import { z } from 'zod';
import { createAuditRepository } from './data/audit.repository';
import { createDatabase } from './db';
import { backfillRuntimeEnvironments } from './use-cases/runtime-environments/backfill-runtime-environments';

/**
 * `node dist/backfill-runtime-environments.js`: materializes runtime environments from the hosts' existing
 * public URLs (idempotent; a second run changes nothing). Run once after the migration that adds them, as the
 * backfill job in every hub process does at start-up. Prints one JSON line `{ created, placed, skipped }` on stdout.
 */
runMain('hub-api backfill-runtime-environments', async () => {
  const config = loadConfig(
    'hub-api backfill-runtime-environments',
    z.object({
      DATABASE_URL: envFields.postgresUrl().default('postgresql://postgres@127.0.0.1:5432/svc_hub'),
      LOG_LEVEL: envFields.logLevel(),
    }),
  );
  const logger = createLogger({ name: 'hub-api-backfill', level: config.LOG_LEVEL });
  const database = createDatabase(config.DATABASE_URL, { poolSize: 2 });
  try {
    const summary = await backfillRuntimeEnvironments({
      db: database.prisma,
      audit: createAuditRepository(database.prisma),
    });
    logger.info(
      { created: summary.created.length, placed: summary.placed, skipped: summary.skipped },
      'runtime environments backfilled',
    );
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await database.close();
  }
});
