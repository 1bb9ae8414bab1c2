import path from 'node:path';
import { workflowDocument } from '@svc/contracts';
import { createHttpApp, mountOperations } from '@svc/service-kit';
import type { Logger, Redis } from '@svc/service-kit';
import type { Express } from 'express';
import type { Database } from './db';
import { systemHandlers } from './routes/system.routes';

/** SQL migrations of the workflow database (same relative place from src/ and dist/). */
export const MIGRATIONS_DIR = path.join(__dirname, '..', 'prisma', 'migrations');

export interface WorkflowAppOptions {
  database: Database;
  redis: Redis;
  logger: Logger;
  publicUrl: string;
  bodyLimit?: string;
  validateResponses?: boolean;
}

/** The Workflow API's HTTP app: every operation of the workflow contract. */
export function createWorkflowApp(options: WorkflowAppOptions): Express {
  const { logger } = options;
  return createHttpApp({
    logger,
    bodyLimit: options.bodyLimit,
    configure(app) {
      mountOperations(app, {
        document: workflowDocument,
        handlers: {
          ...systemHandlers({
            pool: options.database.pool,
            redis: options.redis,
            publicUrl: options.publicUrl,
          }),
        },
        validateResponses: options.validateResponses,
        logger,
      });
    },
  });
}
