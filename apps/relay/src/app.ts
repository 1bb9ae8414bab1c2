import type { Express } from 'express';
import { relayDocument } from '@svc/contracts';
import type { RelayApi } from '@svc/contracts';
import { createHttpApp, mountOperations, runReadinessChecks } from '@svc/service-kit';
import type { Logger, OperationHandlers } from '@svc/service-kit';
import type { RelayConfig } from './env';
import { healthRoutes } from './routes/health.routes';
import { statusRoutes } from './routes/status.routes';
import { RUNTIME_VERSION } from './runtime-version';
import { relayReadinessChecks } from './use-cases/health/check-readiness';

export interface RelayAppOptions {
  config: RelayConfig;
  logger: Logger;
  /** How long the hub has to answer the readiness probe (default 2 s). */
  hubTimeoutMs?: number;
  /** Reported by `/status` as `started_at` (default: when the app is built). */
  startedAt?: Date;
  /** Check every success body against the contract (tests turn this on). */
  validateResponses?: boolean;
}

/** The relay's HTTP app, wired from explicit options; `main.ts` and the tests both build it here. */
export function buildApp(options: RelayAppOptions): Express {
  const { config, logger } = options;
  const hubTimeoutMs = options.hubTimeoutMs ?? 2000;
  // The hub probe aborts itself after hubTimeoutMs; the outer limit is only a backstop.
  const checkTimeoutMs = hubTimeoutMs + 1000;
  const checks = relayReadinessChecks(config, { hubTimeoutMs });
  const now = () => new Date();

  const handlers: OperationHandlers<RelayApi.operations> = {
    ...healthRoutes({ checks, timeoutMs: checkTimeoutMs }),
    ...statusRoutes({
      facts: {
        host: config.host,
        runtimeVersion: RUNTIME_VERSION,
        startedAt: options.startedAt ?? now(),
        workspace: config.workspace,
      },
      configuredPort: config.port,
      now,
      isReady: async () => (await runReadinessChecks(checks, checkTimeoutMs)).ready,
    }),
  };

  return createHttpApp({
    logger,
    configure: (app) =>
      mountOperations<RelayApi.operations>(app, {
        document: relayDocument,
        handlers,
        logger,
        validateResponses: options.validateResponses ?? false,
      }),
  });
}
