import { createLogger, envFields, loadConfig, runMain } from '@svc/service-kit';
import { z } from 'zod';
import { createDatabase } from './db';
import { bootstrapWorkspace } from './use-cases/workspaces/bootstrap-workspace';

/**
 * `node dist/bootstrap.js`: ensures a workspace and its first owner exist (idempotent). Prints one JSON
 * line `{ workspace: {id, slug}, participant: {id, email} }` on stdout.
 */
runMain('hub-api bootstrap', async () => {
  const config = loadConfig(
    'hub-api bootstrap',
    z.object({
      DATABASE_URL: envFields.postgresUrl().default('postgresql://postgres@127.0.0.1:5432/svc_hub'),
      BOOTSTRAP_WORKSPACE_SLUG: z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/),
      BOOTSTRAP_WORKSPACE_NAME: z.string().min(1).default('Development'),
      BOOTSTRAP_ADMIN_EMAIL: z.email(),
      BOOTSTRAP_ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters'),
      LOG_LEVEL: envFields.logLevel(),
    }),
  );
  const logger = createLogger({ name: 'hub-api-bootstrap', level: config.LOG_LEVEL });
  const database = createDatabase(config.DATABASE_URL, { poolSize: 2 });
  try {
    const result = await bootstrapWorkspace(database.prisma, {
      workspaceSlug: config.BOOTSTRAP_WORKSPACE_SLUG,
      workspaceName: config.BOOTSTRAP_WORKSPACE_NAME,
      adminEmail: config.BOOTSTRAP_ADMIN_EMAIL,
      adminPassword: config.BOOTSTRAP_ADMIN_PASSWORD,
    });
    logger.info({ workspace: result.workspace.slug }, 'bootstrap done');
    process.stdout.write(
      `${JSON.stringify({
        workspace: { id: result.workspace.id, slug: result.workspace.slug },
        participant: { id: result.participant.id, email: result.participant.email },
      })}\n`,
    );
  } finally {
    await database.close();
  }
});
