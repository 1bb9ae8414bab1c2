import type { Pool } from 'pg';
import type { Logger } from '@svc/service-kit';
import type { HubInternalClient } from '@svc/contracts';
import type { ProjectDirectory } from './auth/project-directory';
import type { WorkflowAudit } from './data/audit.repository';
import type { ContractIndex } from './data/contract-index.cache';
import type { DeliveryAttemptStore } from './data/delivery-attempts.batch';
import type { DeliveryRateLimiter } from './data/delivery-rate.limiter';
import type { DeliveryQueue } from './data/delivery.queue';
import type { HubReads } from './data/hub-reads';
import type { EngineQueue } from './data/reconcile.queue';
import type { Db } from './db';
import type { DeliverySettings } from './domain/delivery-settings';
import type { EngineSettings } from './domain/engine-settings';
import type { SigningSecretCache } from './domain/signing-secrets';
import type { DeliveryMetrics, SweeperMetrics } from './domain/workflow-metrics';
import type { DeliveryAgentPool } from './transport/http-sender';

/**
 * Everything a workflow use-case may need; built once in app wiring, passed explicitly. The caches live here
 * (never in module globals), so two apps in one process never share entries.
 */
export interface WorkflowDeps {
  db: Db;
  /** The same database's pool, for the few hot paths that send plain SQL (delivery attempts). */
  pool: Pool;
  hub: HubInternalClient;
  /** The hub's roster and runtime readiness, concurrent identical reads sharing one call. */
  hubReads: HubReads;
  projects: ProjectDirectory;
  audit: WorkflowAudit;
  logger: Logger;
  now: () => Date;
  /** Reconcile jobs and assignment announcements (Redis); never the source of truth. */
  queue: EngineQueue;
  engine: EngineSettings;
  delivery: DeliverySettings;
  /** Delivery jobs (Redis); the delivery rows in Postgres are the source of truth. */
  deliveries: DeliveryQueue;
  /** Each project's compiled active contracts (resolve); writes announced to every replica (decision 109). */
  contractIndex: ContractIndex;
  /** Opened signing secrets of delivery subscriptions. */
  signingSecrets: SigningSecretCache;
  /** Reads and records delivery attempts, batching the statements of concurrent attempts. */
  deliveryAttempts: DeliveryAttemptStore;
  /** Paces rate-limited subscriptions across workers (Redis); the worker process has it. */
  deliveryRate?: DeliveryRateLimiter;
  /** Keep-alive connections and TLS contexts of delivery sends. */
  deliveryAgents: DeliveryAgentPool;
  /** Delivery attempt counts and latencies (the worker process records them). */
  deliveryMetrics?: DeliveryMetrics;
  /** What the sweeper re-enqueued and what the queue still held (the worker process records them). */
  sweeperMetrics?: SweeperMetrics;
}
