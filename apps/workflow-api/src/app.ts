import path from 'node:path';
import { createRemoteJwks, createTokenVerifier } from '@svc/auth';
import type { TokenVerifier } from '@svc/auth';
import { createHubClient, createHubInternalClient, workflowDocument } from '@svc/contracts';
import type { HubInternalClient } from '@svc/contracts';
import {
  createCredentialNoticePublisher,
  createHttpApp,
  mountApiDocs,
  mountOperations,
  subscribeCredentialNotices,
} from '@svc/service-kit';
import type { CredentialNoticePublisher } from '@svc/service-kit';
import type { AppMetrics, Logger, Redis } from '@svc/service-kit';
import type { Express } from 'express';
import { accessGuard } from './auth/access-guard';
import { createAgentStanding, hubAgentStandingCheck } from './auth/agent-standing';
import { createWorkflowCredentialResolver } from './auth/credential-resolver';
import { createKeyIntrospector } from './auth/key-introspector';
import { createMemberDirectory } from './auth/member-directory';
import { createProjectDirectory } from './auth/project-directory';
import { stageGuard } from './auth/stage-guard';
import { createAnnouncements } from './data/announcements.subscriber';
import { createAssignmentWaiter } from './data/assignment.waiter';
import { createInvocationChangeWaiter } from './data/invocation-change.waiter';
import type { InvocationChangeWaiter } from './data/invocation-change.waiter';
import { createWorkflowAudit } from './data/audit.repository';
import { createContractIndex } from './data/contract-index.cache';
import { createDeliveryAttemptStore } from './data/delivery-attempts.batch';
import { createDeliveryQueue } from './data/delivery.queue';
import type { DeliveryRateLimiter } from './data/delivery-rate.limiter';
import type { DeliveryQueue } from './data/delivery.queue';
import { createEngineQueue } from './data/reconcile.queue';
import type { EngineQueue } from './data/reconcile.queue';
import { createHubReads } from './data/hub-reads';
import type { Database } from './db';
import type { WorkflowDeps } from './deps';
import { createArtifactValidatorCache } from './domain/artifact-schema-rules';
import { defaultAdmissionSettings } from './domain/admission-settings';
import type { AdmissionSettings } from './domain/admission-settings';
import { DEFAULT_DELIVERY_SETTINGS } from './domain/delivery-settings';
import type { DeliverySettings } from './domain/delivery-settings';
import { DEFAULT_ENGINE_SETTINGS } from './domain/engine-settings';
import type { EngineSettings } from './domain/engine-settings';
import { createSigningSecretCache } from './domain/signing-secrets';
import { registerAdmissionMetrics, registerInvocationGauge } from './domain/workflow-metrics';
import type { DeliveryMetrics, SweeperMetrics } from './domain/workflow-metrics';
import { artifactSchemaHandlers } from './routes/artifact-schemas.routes';
import { assistHandlers } from './routes/assist.routes';
import { runLimitHandlers } from './routes/run-limits.routes';
import { contractHandlers } from './routes/contracts.routes';
import { deliveryHandlers } from './routes/delivery.routes';
import { invocationHandlers } from './routes/invocations.routes';
import { preflightHandlers } from './routes/preflight.routes';
import { stageHandlers } from './routes/stages.routes';
import { systemHandlers } from './routes/system.routes';
import { createAdmission } from './transport/fair-admission';
import type { Admission } from './transport/fair-admission';
import { DeliveryAgentPool } from './transport/http-sender';
import { countInvocationsByState } from './use-cases/invocations/count-invocations-by-state';
import { nodeFetch } from '@svc/service-kit/node-fetch';

/** SQL migrations of the workflow database (same relative place from src/ and dist/). */
export const MIGRATIONS_DIR = path.join(__dirname, '..', 'prisma', 'migrations');

export interface WorkflowServiceOptions {
  database: Database;
  redis: Redis;
  logger: Logger;
  publicUrl: string;
  /**
   * The hub: its internal API (key introspection, projects, roster, handoffs) and the issuer and JWKS of its
   * participant and agent tokens (issuer defaults to the URL).
   */
  hub: { url: string; serviceToken: string; issuer?: string } | HubInternalClient;
  /** Verifies hub-issued bearer tokens; built from `hub.url` when not given. */
  tokens?: TokenVerifier;
  /** How often an agent's standing is asked of the hub when no notice came (ms, default 30 s; decision 60). */
  agentStandingTtlMs?: number;
  /** Key prefix of the queues (WORKFLOW_QUEUE_PREFIX). */
  queuePrefix?: string;
  engine?: Partial<EngineSettings>;
  delivery?: Partial<DeliverySettings>;
  bodyLimit?: string;
  now?: () => Date;
  validateResponses?: boolean;
  /**
   * Fair admission of authenticated requests by project (decision 100); defaults for a pool of 10 connections.
   */
  admission?: Partial<AdmissionSettings>;
  /** Request metrics and the invocation gauge in this registry; `/metrics` on the app when `serveRoute`. */
  metrics?: AppMetrics;
}

function hubClientOf(options: WorkflowServiceOptions): HubInternalClient {
  return 'url' in options.hub
    ? createHubInternalClient({
        baseUrl: options.hub.url,
        serviceToken: options.hub.serviceToken,
        clientName: 'workflow-api',
        // Node's own HTTP client: half the CPU of the global fetch per hub call (see `nodeFetch`).
        fetch: nodeFetch(),
      })
    : options.hub;
}

/**
 * The dependencies every workflow use-case takes, built from the app options, with this app's own caches
 * (compiled contracts, opened signing secrets, delivery connections).
 */
export function createWorkflowDeps(
  options: Pick<WorkflowServiceOptions, 'database' | 'logger' | 'now' | 'engine' | 'delivery'> & {
    hub: HubInternalClient;
    queue: EngineQueue;
    deliveries: DeliveryQueue;
    deliveryMetrics?: DeliveryMetrics;
    sweeperMetrics?: SweeperMetrics;
    /** Connections of delivery sends (the worker sizes them to its delivery concurrency). */
    deliveryAgents?: DeliveryAgentPool;
    /** Paces rate-limited subscriptions (the worker process, which attempts deliveries). */
    deliveryRate?: DeliveryRateLimiter;
    /** Where contract writes are announced to the other replicas (the Workflow API process; decision 109). */
    notices?: CredentialNoticePublisher;
  },
): WorkflowDeps {
  const delivery = { ...DEFAULT_DELIVERY_SETTINGS, ...options.delivery };
  const engine = { ...DEFAULT_ENGINE_SETTINGS, ...options.engine };
  return {
    db: options.database.prisma,
    pool: options.database.pool,
    hub: options.hub,
    hubReads: createHubReads(options.hub, options.logger, { rosterMaxAgeMs: engine.rosterMaxAgeMs }),
    projects: createProjectDirectory({ hub: options.hub }),
    audit: createWorkflowAudit(options.database.prisma),
    logger: options.logger,
    now: options.now ?? (() => new Date()),
    queue: options.queue,
    engine,
    delivery,
    deliveries: options.deliveries,
    contractIndex: createContractIndex(options.database.prisma, {
      checkMs: engine.contractCheckMs,
      ...(options.notices ? { notices: options.notices } : {}),
    }),
    signingSecrets: createSigningSecretCache(delivery.secrets),
    deliveryAttempts: createDeliveryAttemptStore(options.database.pool),
    deliveryAgents: options.deliveryAgents ?? new DeliveryAgentPool(),
    ...(options.deliveryMetrics ? { deliveryMetrics: options.deliveryMetrics } : {}),
    ...(options.deliveryRate ? { deliveryRate: options.deliveryRate } : {}),
    ...(options.sweeperMetrics ? { sweeperMetrics: options.sweeperMetrics } : {}),
  };
}

export interface WorkflowService {
  app: Express;
  deps: WorkflowDeps;
  /** The requests holding a read of an invocation (`?wait=`), by invocation. */
  invocationWaits: InvocationChangeWaiter;
  /** Admission of the requests (in flight and waiting). */
  admission: Pick<Admission, 'stats'>;
  /** Closes what the service opened itself (queue and subscriber connections); not the database or `redis`. */
  close(): Promise<void>;
}

/** The Workflow API's HTTP app with every operation of the workflow contract, and its own connections. */
export function createWorkflowService(options: WorkflowServiceOptions): WorkflowService {
  const { logger } = options;
  const hub = hubClientOf(options);
  const prefix = options.queuePrefix ?? 'svc';
  // Announcements and fair-share counts go over a connection of their own: BullMQ loads its scripts onto the
  // queues' connection, and ioredis copies every loaded script into each pipeline made on it.
  const publisher = options.redis.duplicate({ lazyConnect: true, connectionName: 'workflow-api-publisher' });
  const queue = createEngineQueue({ connection: options.redis, publisher, prefix, logger });
  const deliveries = createDeliveryQueue({ connection: options.redis, prefix, logger });
  const deps = createWorkflowDeps({
    ...options,
    hub,
    queue,
    deliveries,
    notices: createCredentialNoticePublisher({ redis: options.redis, prefix, logger }),
  });
  const tokens =
    options.tokens ??
    ('url' in options.hub
      ? createTokenVerifier({
          issuer: options.hub.issuer ?? options.hub.url,
          getJwks: createRemoteJwks({ url: new URL('/.well-known/jwks.json', options.hub.url).toString() }),
        })
      : undefined);
  const keys = createKeyIntrospector({ hub });
  const agents = createAgentStanding({
    ttlMs: options.agentStandingTtlMs,
    ...('url' in options.hub
      ? {
          check: hubAgentStandingCheck(
            createHubClient({ baseUrl: options.hub.url, clientName: 'workflow-api' }),
          ),
        }
      : {}),
  });
  const resolver = createWorkflowCredentialResolver({ keys, tokens, agents });
  const members = createMemberDirectory({ hub });
  // The hub announces revocations and membership changes; the cached answers go at once (decision 47).
  const notices = subscribeCredentialNotices({
    subscriber: options.redis.duplicate({
      lazyConnect: true,
      connectionName: 'workflow-api-credential-notices',
    }),
    prefix,
    logger,
    onNotice: (notice) => {
      if (notice.kind === 'api_key_revoked') keys.forgetKeyId(notice.key_id);
      else if (notice.kind === 'agent_revoked')
        agents.revoke(notice.agent_id, Date.parse(notice.tokens_expire_by));
      else if (notice.kind === 'project_changed') deps.projects.forget(notice.project_id);
      else if (notice.kind === 'roster_changed') deps.hubReads.forgetRosters(notice.workspace_id);
      else if (notice.kind === 'contracts_changed') deps.contractIndex.forget(notice.project_id);
      else members.forget(notice.workspace_id, notice.participant_id);
    },
  });
  // Held requests (an agent's long-poll for stages, a held read of an invocation) share one subscription.
  const announcements = createAnnouncements({
    subscriber: options.redis.duplicate({ lazyConnect: true, connectionName: 'workflow-api-announcements' }),
    logger,
  });
  const waiter = createAssignmentWaiter({ announcements, prefix });
  const invocationWaits = createInvocationChangeWaiter({ announcements, prefix });
  const validators = createArtifactValidatorCache();
  let admissionMetrics: ReturnType<typeof registerAdmissionMetrics> | undefined;
  const admission = createAdmission(
    { ...defaultAdmissionSettings(), ...options.admission },
    { refused: (reason) => admissionMetrics?.refused(reason) },
  );
  if (options.metrics) {
    registerInvocationGauge(options.metrics.registry, { count: () => countInvocationsByState(deps), logger });
    admissionMetrics = registerAdmissionMetrics(options.metrics.registry, admission);
  }
  const app = createHttpApp({
    logger,
    bodyLimit: options.bodyLimit,
    ...(options.metrics ? { metrics: options.metrics } : {}),
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
          ...invocationHandlers(deps, { validators, members, invocationWaits }),
          ...preflightHandlers(deps),
          ...artifactSchemaHandlers(deps, validators),
          ...stageHandlers(deps, { waiter }),
          ...deliveryHandlers(deps),
          ...assistHandlers(deps, members),
          ...runLimitHandlers(deps),
        },
        resolver,
        // After the credential, before anything that reads the database (decision 100).
        admission: admission.middleware,
        guards: [accessGuard(deps.projects, members), stageGuard(deps)],
        validateResponses: options.validateResponses,
        logger,
      });
      // The API reference and the problem code pages (every problem's `type`), from the public document.
      mountApiDocs(app, { document: { ...workflowDocument, servers: [{ url: options.publicUrl }] } });
    },
  });
  return {
    app,
    deps,
    invocationWaits,
    admission,
    async close() {
      await Promise.all([announcements.close(), queue.close(), deliveries.close(), notices.close()]);
      await publisher.quit().catch(() => publisher.disconnect());
      deps.deliveryAgents.close();
    },
  };
}
