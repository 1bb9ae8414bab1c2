import type { Express } from 'express';
import { relayDocument } from '@svc/contracts';
import type { RelayApi } from '@svc/contracts';
import {
  createHttpApp,
  forbidden,
  labelOperation,
  mountApiDocs,
  mountOperations,
  reloadRuntimeKey,
  runReadinessChecks,
  runtimeKeyAtStart,
} from '@svc/service-kit';
import type { Logger, OperationHandlers } from '@svc/service-kit';
import type { RelayConfig } from './env';
import { relayRegistry } from './metrics';
import { healthRoutes } from './routes/health.routes';
import { relayTokenGuard, spawnRoutes } from './routes/spawn.routes';
import { statusRoutes } from './routes/status.routes';
import { RUNTIME_VERSION } from './runtime-version';
import { missingSettings, relayReadinessChecks } from './use-cases/health/check-readiness';
import { AgentSpawner } from './use-cases/spawn/spawn-agent';
import { HubSpawnEvents } from './data/hub-spawn-events';
import { SpawnLog } from './data/spawn-log';
import { drainMarker } from './data/drain-marker';
import { isAllowedHost } from './domain/host-guard';

export interface RelayServiceOptions {
  config: RelayConfig;
  logger: Logger;
  /** How long the hub has to answer the readiness probe (default 2 s). */
  hubTimeoutMs?: number;
  /** Reported by `/status` as `started_at` (default: when the app is built). */
  startedAt?: Date;
  /** Check every success body against the contract (tests turn this on). */
  validateResponses?: boolean;
  /** The environment spawned processes take their allow-listed variables from (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

export interface RelayService {
  app: Express;
  spawner: AgentSpawner;
  /** Resolves once every spawn event so far was reported to the hub (or given up on). */
  eventsFlushed: () => Promise<void>;
  /**
   * Re-reads SVC_WORKSPACE_API_KEY_FILE (on SIGHUP): a new key is used from the next hub call (spawn reports,
   * readiness); spawns in flight go on. Resolves with whether the key changed.
   */
  reloadKey: () => Promise<boolean>;
  /** The required settings that are missing now (the key counts when the key file or the variable gave one). */
  missingSettings: () => string[];
}

/**
 * The relay wired from explicit options: its HTTP app, with the spawner and the hub reports it stops at
 * shutdown. `main.ts` and the tests both build it here.
 */
export function createRelayService(options: RelayServiceOptions): RelayService {
  const { config, logger } = options;
  const hubTimeoutMs = options.hubTimeoutMs ?? 2000;
  // The hub probe aborts itself after hubTimeoutMs; the outer limit is only a backstop.
  const checkTimeoutMs = hubTimeoutMs + 1000;
  // The workspace API key in use: the key file's (re-read on SIGHUP) or SVC_WORKSPACE_API_KEY.
  let apiKey = runtimeKeyAtStart(config.workspaceApiKeyFile, config.workspaceApiKey, logger);
  const checks = relayReadinessChecks(config, { hubTimeoutMs, apiKey: () => apiKey });
  const now = () => new Date();

  const events = new HubSpawnEvents({
    hubUrl: config.hubUrl,
    apiKey: () => apiKey,
    runtimeInstanceId: config.runtimeInstanceId,
    logger,
  });
  const spawner = new AgentSpawner({
    settings: {
      svc: config.spawn.svcEntry
        ? {
            nodePath: process.execPath,
            svcEntry: config.spawn.svcEntry,
            configDir: config.spawn.configDir,
            profile: config.spawn.profile,
          }
        : undefined,
      commands: config.spawn.commands,
      childEnvKeep: config.spawn.childEnvKeep,
      startTimeoutMs: config.spawn.startTimeoutMs,
      stopGraceMs: config.spawn.stopGraceMs,
      waitMs: config.spawn.waitMs,
      missingSettings: () => [
        ...missingSettings({ ...config, workspaceApiKey: apiKey }),
        ...(config.runtimeInstanceId ? [] : ['SVC_RUNTIME_INSTANCE_ID']),
      ],
      draining: drainMarker(config.spawn.drainFile),
    },
    log: new SpawnLog(config.spawn.logFile),
    events,
    logger,
    env: options.env ?? process.env,
    now,
  });

  const handlers: OperationHandlers<RelayApi.operations> = {
    ...spawnRoutes({ spawner }),
    ...healthRoutes({ checks, timeoutMs: checkTimeoutMs }),
    ...statusRoutes({
      facts: {
        host: config.host,
        runtimeVersion: RUNTIME_VERSION,
        startedAt: options.startedAt ?? now(),
        workspace: config.workspace,
        runtimeInstanceId: config.runtimeInstanceId,
        spawnEnabled: Boolean(config.relayToken),
      },
      spawns: () => ({ ...spawner.counts, in_flight: spawner.inFlight }),
      configuredPort: config.port,
      now,
      isReady: async () => (await runReadinessChecks(checks, checkTimeoutMs)).ready,
    }),
  };

  const app = createHttpApp({
    logger,
    metrics: { registry: relayRegistry, serveRoute: config.metricsPort === undefined },
    configure: (app) => {
      // DNS rebinding: a page that makes its own name resolve to 127.0.0.1 still sends its name as Host.
      app.use((req, _res, next) => {
        if (isAllowedHost(req.headers.host, config.allowedHosts)) next();
        else
          next(
            forbidden(
              'host_not_allowed',
              "The Host header names neither a loopback address nor this relay's public hostname.",
            ),
          );
      });
      // Spawns refused by the token guard are counted under their operation, like every other answer.
      app.post('/spawn', (_req, res, next) => {
        labelOperation(res, 'relaySpawn');
        next();
      });
      app.post('/spawn', relayTokenGuard(config.relayToken));
      // The page of each problem code (the `type` of the relay's problems) and the relay's API reference.
      mountApiDocs(app, { document: relayDocument });
      mountOperations<RelayApi.operations>(app, {
        document: relayDocument,
        handlers,
        logger,
        validateResponses: options.validateResponses ?? false,
      });
    },
  });
  const reloadKey = async () => {
    const key = await reloadRuntimeKey(config.workspaceApiKeyFile, apiKey, logger);
    if (key === undefined) return false;
    apiKey = key;
    return true;
  };
  return {
    app,
    spawner,
    eventsFlushed: () => events.flushed(),
    reloadKey,
    missingSettings: () => missingSettings({ ...config, workspaceApiKey: apiKey }),
  };
}
