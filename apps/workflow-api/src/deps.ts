import type { Pool } from 'pg';
import type { Logger } from '@svc/service-kit';
import type { HubInternalClient } from '@svc/contracts';
import type { ProjectDirectory } from './auth/project-directory';
import type { WorkflowAudit } from './data/audit.repository';
import type { Db } from './db';
import type { EngineQueue } from './engine/queue';
import type { DeliverySettings } from './delivery/settings';
import type { DeliveryQueue } from './delivery/queue';
import type { EngineSettings } from './engine/settings';

/** Everything a workflow use-case may need; built once in app wiring, passed explicitly. */
export interface WorkflowDeps {
  db: Db;
  /** The same database's pool, for the few hot paths that send plain SQL (delivery attempts). */
  pool: Pool;
  hub: HubInternalClient;
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
}
