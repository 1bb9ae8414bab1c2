import path from 'node:path';
import { hubDocument, hubInternalDocument } from '@svc/contracts';
import {
  createCredentialNoticePublisher,
  silentCredentialNotices,
  createConsoleRouteNoticePublisher,
  silentConsoleRouteNotices,
  subscribeCredentialNotices,
  createHttpApp,
  createSecretBox,
  mountApiDocs,
  mountOperations,
  parseSecretBoxKeys,
} from '@svc/service-kit';
import type { AppMetrics, Logger, Redis, SecretBox } from '@svc/service-kit';
import type { Express } from 'express';
import { ApiKeyCache } from './auth/api-key-cache';
import { LOGIN_THROTTLE_DEFAULTS, LoginThrottle } from './auth/login-throttle';
import { createHubCredentialResolver } from './auth/credential-resolver';
import { SigningKeyRing } from './auth/signing-keys';
import { workspaceGuard } from './auth/workspace-guard';
import { runtimeHostGuard } from './auth/runtime-host-guard';
import { resourceGuard } from './auth/resource-guard';
import { createAuditRepository } from './data/audit.repository';
import type { Database } from './db';
import type { HubDeps } from './deps';
import type { HubConfig } from './env';
import { agentHandlers } from './routes/agents.routes';
import { apiKeyHandlers } from './routes/api-keys.routes';
import { auditHandlers } from './routes/audit.routes';
import { authHandlers } from './routes/auth.routes';
import { collaborationHandlers } from './routes/collaboration.routes';
import { consoleHandlers } from './routes/console.routes';
import { contractHandlers } from './routes/contract.routes';
import { internalHandlers } from './routes/internal.routes';
import { internalHandoffHandlers } from './routes/internal-handoffs.routes';
import { internalRosterHandlers } from './routes/internal-roster.routes';
import { internalProviderHandlers } from './routes/internal-providers.routes';
import { projectHandlers } from './routes/projects.routes';
import { providerHandlers } from './routes/providers.routes';
import { runtimeHandlers } from './routes/runtime.routes';
import { runtimeEnvironmentHandlers } from './routes/runtime-environments.routes';
import { createTunnelProviders } from './data/tunnel-providers';
import { CLOUDFLARE_TOKEN_AAD } from './data/tunnel-providers/cloudflare';
import { systemHandlers } from './routes/system.routes';
import { teamHandlers } from './routes/teams.routes';
import { workspaceHandlers } from './routes/workspaces.routes';
import { internalSpawnHandlers, spawnHandlers } from './routes/spawn.routes';
import { createSpawnDriver } from './use-cases/spawn/spawn-driver';
import type { SpawnDriver } from './use-cases/spawn/spawn-driver';

/** SQL migrations of the hub database (same relative place from src/ and dist/). */
export const MIGRATIONS_DIR = path.join(__dirname, '..', 'prisma', 'migrations');

export type HubSettings = Pick<
  HubConfig,
  | 'HUB_PUBLIC_URL'
  | 'HUB_WORKFLOW_PUBLIC_URL'
  | 'HUB_ENCRYPTION_KEYS'
  | 'HUB_SERVICE_TOKEN'
  | 'HUB_PARTICIPANT_TOKEN_TTL_SECONDS'
  | 'HUB_AGENT_TOKEN_TTL_SECONDS'
  | 'HUB_MANAGED_PROVIDERS'
  | 'HUB_SERVER_LOCAL_PROVIDER_AUTH'
  | 'HUB_RUNTIME_CREDENTIAL_TTL_SECONDS'
  | 'HUB_BODY_LIMIT'
> &
  Partial<
    Pick<
      HubConfig,
      | 'HUB_TUNNEL_PROVIDER'
      | 'HUB_CLOUDFLARE_API_URL'
      | 'HUB_CLOUDFLARE_ACCOUNT_ID'
      | 'HUB_CLOUDFLARE_ZONE_ID'
      | 'HUB_CLOUDFLARE_ZONE_NAME'
      | 'HUB_CLOUDFLARE_API_TOKEN_SEALED'
      | 'HUB_SPAWN_RELAY_TIMEOUT_SECONDS'
      | 'HUB_SPAWN_DEADLINE_SECONDS'
      | 'HUB_SPAWN_WAIT_SECONDS'
      | 'HUB_SPAWN_SWEEP_INTERVAL_SECONDS'
      | 'HUB_TRUST_PROXY'
    >
  >;

/** The tunnel providers from the settings; the sealed Cloudflare token is opened here and nowhere else. */
function tunnelProvidersFrom(settings: HubSettings, box: SecretBox, now: () => Date) {
  const {
    HUB_CLOUDFLARE_ACCOUNT_ID: accountId,
    HUB_CLOUDFLARE_ZONE_ID: zoneId,
    HUB_CLOUDFLARE_ZONE_NAME: zoneName,
    HUB_CLOUDFLARE_API_TOKEN_SEALED: sealed,
  } = settings;
  let cloudflare;
  if (accountId && zoneId && zoneName && sealed) {
    let apiToken: string;
    try {
      apiToken = box.open(sealed, CLOUDFLARE_TOKEN_AAD);
    } catch {
      throw new Error(
        'hub-api: HUB_CLOUDFLARE_API_TOKEN_SEALED cannot be opened with HUB_ENCRYPTION_KEYS (seal it with node dist/seal-config-secret.js)',
      );
    }
    cloudflare = {
      apiUrl: settings.HUB_CLOUDFLARE_API_URL ?? 'https://api.cloudflare.com/client/v4',
      accountId,
      zoneId,
      zoneName,
      apiToken,
    };
  }
  return createTunnelProviders({ defaultProvider: settings.HUB_TUNNEL_PROVIDER ?? 'local', cloudflare, now });
}

export interface HubServiceOptions {
  database: Database;
  settings: HubSettings;
  logger: Logger;
  /** Check every response against the contract (tests turn this on). */
  validateResponses?: boolean;
  now?: () => Date;
  keyRefreshIntervalMs?: number;
  /** Request metrics in this registry; `/metrics` on the app when `serveRoute`. */
  metrics?: AppMetrics;
  /**
   * Redis for credential notices (decision 47): revocations and membership changes are announced on
   * `<prefix>:credential-notices` after commit, and this replica's key cache drops keys other replicas
   * revoke. Without it nothing is announced and caches fall back to their time limits.
   */
  notices?: { redis: Redis; prefix: string };
  /** Per-client sign-in limits (defaults: {@link LOGIN_THROTTLE_DEFAULTS}). */
  loginThrottle?: Partial<typeof LOGIN_THROTTLE_DEFAULTS>;
}

export interface HubService {
  app: Express;
  deps: HubDeps;
  keys: SigningKeyRing;
  /** Drives agent spawns through the hosts' relays; the entry point starts its sweeper and stops it. */
  spawns: SpawnDriver;
  stop(): void;
}

/** Wires the hub: signing keys, dependencies, the public and internal contracts. */
export async function createHubService(options: HubServiceOptions): Promise<HubService> {
  const { database, settings, logger } = options;
  const now = options.now ?? (() => new Date());
  const box = createSecretBox(parseSecretBoxKeys(settings.HUB_ENCRYPTION_KEYS));
  const keys = new SigningKeyRing({
    db: database.prisma,
    box,
    issuer: settings.HUB_PUBLIC_URL,
    logger: logger.child({ module: 'signing-keys' }),
    refreshIntervalMs: options.keyRefreshIntervalMs,
    now,
  });
  await keys.start();
  const apiKeys = new ApiKeyCache({ db: database.prisma, logger: logger.child({ module: 'api-keys' }), now });
  const deps: HubDeps = {
    db: database.prisma,
    pool: database.pool,
    keys,
    box,
    audit: createAuditRepository(database.prisma),
    apiKeys,
    notices: options.notices
      ? createCredentialNoticePublisher({ ...options.notices, logger: logger.child({ module: 'notices' }) })
      : silentCredentialNotices,
    routeNotices: options.notices
      ? createConsoleRouteNoticePublisher({
          ...options.notices,
          logger: logger.child({ module: 'route-notices' }),
        })
      : silentConsoleRouteNotices,
    loginThrottle: new LoginThrottle({
      ...LOGIN_THROTTLE_DEFAULTS,
      ...options.loginThrottle,
      now: () => now().getTime(),
      db: database.prisma,
      logger: logger.child({ module: 'login-throttle' }),
    }),
    logger,
    tunnels: tunnelProvidersFrom(settings, box, now),
    now,
    settings: {
      publicUrl: settings.HUB_PUBLIC_URL,
      workflowPublicUrl: settings.HUB_WORKFLOW_PUBLIC_URL,
      participantTokenTtlSeconds: settings.HUB_PARTICIPANT_TOKEN_TTL_SECONDS,
      agentTokenTtlSeconds: settings.HUB_AGENT_TOKEN_TTL_SECONDS,
      hubManagedProviders: settings.HUB_MANAGED_PROVIDERS,
      serverLocalProviderAuth: settings.HUB_SERVER_LOCAL_PROVIDER_AUTH,
      runtimeCredentialTtlSeconds: settings.HUB_RUNTIME_CREDENTIAL_TTL_SECONDS,
    },
  };
  const seconds = (value: number | undefined, fallback: number) => (value ?? fallback) * 1000;
  const spawns = createSpawnDriver(deps, {
    relayTimeoutMs: seconds(settings.HUB_SPAWN_RELAY_TIMEOUT_SECONDS, 30),
    deadlineMs: seconds(settings.HUB_SPAWN_DEADLINE_SECONDS, 150),
    waitMs: seconds(settings.HUB_SPAWN_WAIT_SECONDS, 20),
    sweepIntervalMs: seconds(settings.HUB_SPAWN_SWEEP_INTERVAL_SECONDS, 10),
  });
  const resolver = createHubCredentialResolver({
    db: database.prisma,
    keys,
    serviceToken: settings.HUB_SERVICE_TOKEN,
    logger,
    apiKeys,
  });
  const app = createHttpApp({
    logger,
    bodyLimit: settings.HUB_BODY_LIMIT,
    ...(settings.HUB_TRUST_PROXY !== undefined ? { trustProxy: settings.HUB_TRUST_PROXY } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    configure(express) {
      // The internal operations first: the other services' calls are most of the hub's requests on a run
      // (roster, readiness, stage handoffs), and express tries routes in order, so they no longer walk past
      // every public route first (decision 97). The two documents' paths are disjoint (`/internal/v1/…`).
      mountOperations(express, {
        document: hubInternalDocument,
        handlers: {
          ...internalHandlers(deps),
          ...internalRosterHandlers(deps),
          ...internalProviderHandlers(deps),
          ...internalHandoffHandlers(deps),
          ...internalSpawnHandlers(deps, spawns),
        },
        resolver,
        validateResponses: options.validateResponses,
        logger,
      });
      mountOperations(express, {
        document: hubDocument,
        handlers: {
          ...systemHandlers(deps, database.pool),
          ...authHandlers(deps),
          ...workspaceHandlers(deps),
          ...apiKeyHandlers(deps),
          ...projectHandlers(deps),
          ...contractHandlers(deps),
          ...runtimeHandlers(deps),
          ...runtimeEnvironmentHandlers(deps),
          ...consoleHandlers(deps),
          ...providerHandlers(deps),
          ...collaborationHandlers(deps),
          ...teamHandlers(deps),
          ...agentHandlers(deps),
          ...auditHandlers(deps),
          ...spawnHandlers(deps, spawns),
        },
        resolver,
        guards: [
          workspaceGuard(database.prisma, apiKeys),
          runtimeHostGuard(database.prisma, ['recordRelaySpawnEvent', 'recordRuntimeHostHeartbeat']),
          resourceGuard(deps),
        ],
        validateResponses: options.validateResponses,
        logger,
      });
      // The API reference and the problem code pages (every problem's `type`), from the public document.
      mountApiDocs(express, { document: { ...hubDocument, servers: [{ url: settings.HUB_PUBLIC_URL }] } });
    },
  });
  const noticeSubscription = options.notices
    ? subscribeCredentialNotices({
        subscriber: options.notices.redis.duplicate({
          lazyConnect: true,
          connectionName: 'hub-credential-notices',
        }),
        prefix: options.notices.prefix,
        logger: logger.child({ module: 'notices' }),
        onNotice: (notice) => {
          if (notice.kind === 'api_key_revoked') apiKeys.invalidate(notice.key_id);
        },
      })
    : undefined;
  return {
    app,
    deps,
    keys,
    spawns,
    stop: () => {
      keys.stop();
      void spawns.stop();
      void noticeSubscription?.close();
    },
  };
}
