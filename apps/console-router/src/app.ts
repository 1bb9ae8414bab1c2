import type { Express } from 'express';
import { consoleRouterDocument } from '@svc/contracts';
import type { ConsoleRouterApi } from '@svc/contracts';
import { createHttpApp, mountOperations } from '@svc/service-kit';
import type { Logger, OperationHandlers } from '@svc/service-kit';
import type { ConsoleRouterConfig } from './env';
import { healthRoutes } from './routes/health.routes';
import { consoleRouterReadinessChecks } from './use-cases/check-readiness';

export interface ConsoleRouterAppOptions {
  config: ConsoleRouterConfig;
  logger: Logger;
  /** How long the hub has to answer the JWKS probe (default 2 s). */
  hubTimeoutMs?: number;
  /** Check every success body against the contract (tests turn this on). */
  validateResponses?: boolean;
}

/** The console router's HTTP app, wired from explicit options; `main.ts` and the tests both build it here. */
export function buildApp(options: ConsoleRouterAppOptions): Express {
  const { config, logger } = options;
  const hubTimeoutMs = options.hubTimeoutMs ?? 2000;
  const checks = consoleRouterReadinessChecks({ hubUrl: config.hubUrl, hubTimeoutMs });

  const handlers: OperationHandlers<ConsoleRouterApi.operations> = healthRoutes({
    checks,
    // The JWKS probe aborts itself after hubTimeoutMs; the outer limit is only a backstop.
    timeoutMs: hubTimeoutMs + 1000,
  });

  return createHttpApp({
    logger,
    configure: (app) =>
      mountOperations<ConsoleRouterApi.operations>(app, {
        document: consoleRouterDocument,
        handlers,
        logger,
        validateResponses: options.validateResponses ?? false,
      }),
  });
}
