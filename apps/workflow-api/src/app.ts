import path from 'node:path';
import { createHubInternalClient, workflowDocument } from '@svc/contracts';
import type { HubInternalClient } from '@svc/contracts';
import { createHttpApp, mountOperations } from '@svc/service-kit';
import type { Logger, Redis } from '@svc/service-kit';
import type { Express } from 'express';
import { accessGuard } from './auth/access-guard';
import { createWorkflowCredentialResolver } from './auth/credential-resolver';
import { createKeyIntrospector } from './auth/key-introspector';
import { createProjectDirectory } from './auth/project-directory';
import { createWorkflowAudit } from './data/audit.repository';
import type { Database } from './db';
import type { WorkflowDeps } from './deps';
import { artifactSchemaHandlers } from './routes/artifact-schemas.routes';
import { invocationHandlers } from './routes/invocations.routes';
import { preflightHandlers } from './routes/preflight.routes';
import { contractHandlers } from './routes/contracts.routes';
import { systemHandlers } from './routes/system.routes';

/** SQL migrations of the workflow database (same relative place from src/ and dist/). */
export const MIGRATIONS_DIR = path.join(__dirname, '..', 'prisma', 'migrations');

export interface WorkflowAppOptions {
  database: Database;
  redis: Redis;
  logger: Logger;
  publicUrl: string;
  /** The hub's internal API (key introspection, projects, roster). */
  hub: { url: string; serviceToken: string } | HubInternalClient;
  bodyLimit?: string;
  now?: () => Date;
  validateResponses?: boolean;
}

/** The dependencies every workflow use-case takes, built from the app options. */
export function createWorkflowDeps(options: WorkflowAppOptions): WorkflowDeps {
  const hub =
    'url' in options.hub
      ? createHubInternalClient({
          baseUrl: options.hub.url,
          serviceToken: options.hub.serviceToken,
          clientName: 'workflow-api',
        })
      : options.hub;
  return {
    db: options.database.prisma,
    hub,
    projects: createProjectDirectory({ hub }),
    audit: createWorkflowAudit(options.database.prisma),
    logger: options.logger,
    now: options.now ?? (() => new Date()),
  };
}

/** The Workflow API's HTTP app: every operation of the workflow contract. */
export function createWorkflowApp(options: WorkflowAppOptions): Express {
  const { logger } = options;
  const deps = createWorkflowDeps(options);
  const resolver = createWorkflowCredentialResolver({ keys: createKeyIntrospector({ hub: deps.hub }) });
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
          ...contractHandlers(deps),
          ...invocationHandlers(deps),
          ...preflightHandlers(deps),
          ...artifactSchemaHandlers(deps),
        },
        resolver,
        guards: [accessGuard(deps.projects)],
        validateResponses: options.validateResponses,
        logger,
      });
    },
  });
}
