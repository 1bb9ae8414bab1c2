import { z } from 'zod';
import { readFileSync } from 'node:fs';
import {
  createSecretBox,
  envFields,
  loadConfig,
  metricsPortField,
  parseSecretBoxKeys,
} from '@svc/service-kit';
import { defaultAdmissionSettings } from './domain/admission-settings';
import type { AdmissionSettings } from './domain/admission-settings';
import type { DeliverySettings } from './domain/delivery-settings';
import type { EngineSettings } from './domain/engine-settings';

const schema = z.object({
  WORKFLOW_HOST: envFields.host(),
  WORKFLOW_PORT: envFields.port(4100),
  /** Probe port of the worker process. */
  WORKFLOW_WORKER_PORT: envFields.port(4101),
  DATABASE_URL: envFields.postgresUrl().default('postgresql://postgres@127.0.0.1:5432/svc_workflow'),
  REDIS_URL: envFields.redisUrl().default('redis://127.0.0.1:6379'),
  /** Key prefix of every queue, so several deployments can share one Redis. */
  WORKFLOW_QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/)
    .default('svc'),
  /** Base URL clients reach the Workflow API at (the `servers` of /openapi.json). */
  WORKFLOW_PUBLIC_URL: envFields.httpUrl().default('http://127.0.0.1:4100'),
  /** The hub's internal API (key introspection, roster, handoffs). */
  HUB_URL: envFields.httpUrl().default('http://127.0.0.1:4000'),
  HUB_SERVICE_TOKEN: envFields.secret(32),
  /** Issuer (`iss`) of the hub's participant and agent tokens: the hub's public URL. Defaults to HUB_URL. */
  HUB_ISSUER: envFields.httpUrl().optional(),
  /**
   * How long the hub's word that an agent is not evicted holds when no notice came (decision 60): an evicted
   * agent's token is refused within a second by the hub's notice, and within this long when the notice is lost.
   */
  WORKFLOW_AGENT_RECHECK_MS: z.coerce.number().int().min(1_000).max(30_000).default(30_000),
  /** A stage owner that sends no heartbeat for this long is stalled and the stage reassigned. */
  WORKFLOW_STAGE_STALL_SECONDS: z.coerce.number().int().min(2).max(86_400).default(60),
  /** How often the sweeper looks for lost queue jobs, stalled owners and stuck runs. */
  WORKFLOW_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(2_000),
  /** An outbox row not processed this long after its last enqueue is enqueued again. */
  WORKFLOW_OUTBOX_REDELIVER_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  /** A launching or running invocation untouched this long is reconciled again (owner search, stalls). */
  WORKFLOW_RECHECK_MS: z.coerce.number().int().min(100).max(3_600_000).default(15_000),
  /** A replica re-checks its compiled contracts this often; writes are announced at once (decision 109). */
  WORKFLOW_CONTRACT_CHECK_MS: z.coerce.number().int().min(100).max(3_600_000).default(1_000),
  /** Queue job lock: a job held by a dead worker becomes available again after about this long. */
  WORKFLOW_JOB_LOCK_MS: z.coerce.number().int().min(500).max(600_000).default(30_000),
  /**
   * Reconciles one worker process runs at once; default WORKFLOW_DB_POOL_SIZE, so a reconcile never waits for a
   * connection behind other projects' and every wait is in the reconcile queue, where projects take turns.
   */
  WORKFLOW_RECONCILE_CONCURRENCY: z.coerce.number().int().min(1).max(200).optional(),
  /**
   * How old a project's roster the reconcile may plan with (decision 105): kept in the worker and dropped at once
   * by the hub's roster notice; 0 asks the hub on every reconcile. A lost notice or a stale heartbeat is seen at
   * most this much later.
   */
  WORKFLOW_ROSTER_MAX_AGE_MS: z.coerce.number().int().min(0).max(10_000).default(1_000),
  /**
   * `id:base64(32 bytes)[,…]`: seals delivery signing secrets (the first key seals, every key opens). Without it
   * delivery subscriptions cannot be created (503 delivery_not_configured).
   */
  WORKFLOW_ENCRYPTION_KEYS: z
    .string()
    .refine((value) => {
      try {
        parseSecretBoxKeys(value);
        return true;
      } catch {
        return false;
      }
    }, 'must be id:base64 with 32-byte keys, comma-separated')
    .optional(),
  /** Development only: allow http:// and https:// delivery URLs that resolve to loopback. Off by default. */
  WORKFLOW_DELIVERY_ALLOW_LOOPBACK: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Seconds before each retry of a delivery (comma-separated): 7 retries after the first attempt by default. */
  WORKFLOW_DELIVERY_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/)
    .default('5,300,1800,7200,18000,36000,36000'),
  WORKFLOW_DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(15_000),
  /** Extra CA certificate (PEM file) trusted for delivery endpoints, e.g. a private test receiver. */
  WORKFLOW_DELIVERY_CA_FILE: z.string().min(1).optional(),
  WORKFLOW_DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(200),
  WORKFLOW_BODY_LIMIT: z.string().default('1mb'),
  /**
   * A separate listener (on WORKFLOW_HOST) for the Workflow API's `GET /metrics`; when set, the public listener
   * does not serve it. The worker always serves `/metrics` on its probe port (WORKFLOW_WORKER_PORT).
   */
  WORKFLOW_METRICS_PORT: metricsPortField(),
  /** Operator credential of the worker's queue dashboard (`/queues` on the probe port); unset: dashboard off. */
  SVC_OPERATOR_TOKEN: z.preprocess(
    (value) => (value === '' ? undefined : value),
    envFields.secret(32).optional(),
  ),
  /** The queue dashboard shows queues and jobs only; `false` allows retry, clean, pause and the like. */
  WORKFLOW_QUEUE_DASHBOARD_READ_ONLY: envFields.boolean(true),
  WORKFLOW_DB_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  /** Authenticated requests in flight in the process (decision 100); default WORKFLOW_DB_POOL_SIZE. */
  WORKFLOW_ADMISSION_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(10_000).optional(),
  /** Requests in flight of one project (or agent); default ¾ of WORKFLOW_ADMISSION_MAX_IN_FLIGHT. */
  WORKFLOW_ADMISSION_MAX_IN_FLIGHT_PER_KEY: z.coerce.number().int().min(1).max(10_000).optional(),
  /** Requests waiting for their turn in the process; one more is answered 503 `overloaded` at once. */
  WORKFLOW_ADMISSION_MAX_QUEUED: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** A request waiting longer than this for its turn is answered 503 `overloaded` with `Retry-After`. */
  WORKFLOW_ADMISSION_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(30_000),
  LOG_LEVEL: envFields.logLevel(),
});

export type WorkflowConfig = z.infer<typeof schema>;

export function loadWorkflowConfig(env: NodeJS.ProcessEnv = process.env): WorkflowConfig {
  return loadConfig('workflow-api', schema, env);
}

/** The run engine's timing from the configuration. */
export function engineSettingsOf(config: WorkflowConfig): EngineSettings {
  return {
    stallAfterMs: config.WORKFLOW_STAGE_STALL_SECONDS * 1000,
    sweepIntervalMs: config.WORKFLOW_SWEEP_INTERVAL_MS,
    outboxRedeliverMs: config.WORKFLOW_OUTBOX_REDELIVER_MS,
    recheckMs: config.WORKFLOW_RECHECK_MS,
    rosterMaxAgeMs: config.WORKFLOW_ROSTER_MAX_AGE_MS,
    contractCheckMs: config.WORKFLOW_CONTRACT_CHECK_MS,
  };
}

/** Delivery settings from the configuration (the CA file is read once here). */
export function deliverySettingsOf(config: WorkflowConfig): DeliverySettings {
  return {
    secrets: config.WORKFLOW_ENCRYPTION_KEYS
      ? createSecretBox(parseSecretBoxKeys(config.WORKFLOW_ENCRYPTION_KEYS))
      : null,
    allowLoopbackHttp: config.WORKFLOW_DELIVERY_ALLOW_LOOPBACK,
    retryScheduleMs: config.WORKFLOW_DELIVERY_RETRY_SCHEDULE.split(',').map((s) =>
      Math.round(Number(s) * 1000),
    ),
    timeoutMs: config.WORKFLOW_DELIVERY_TIMEOUT_MS,
    ...(config.WORKFLOW_DELIVERY_CA_FILE
      ? { ca: readFileSync(config.WORKFLOW_DELIVERY_CA_FILE, 'utf8') }
      : {}),
  };
}

/** Fair admission of requests (decision 100): defaults follow the database pool. */
export function admissionSettingsOf(config: WorkflowConfig): AdmissionSettings {
  const defaults = defaultAdmissionSettings(config.WORKFLOW_DB_POOL_SIZE);
  const maxInFlight = config.WORKFLOW_ADMISSION_MAX_IN_FLIGHT ?? defaults.maxInFlight;
  const perKey =
    config.WORKFLOW_ADMISSION_MAX_IN_FLIGHT_PER_KEY ?? Math.max(1, Math.floor((maxInFlight * 3) / 4));
  return {
    ...defaults,
    maxInFlight,
    maxInFlightPerKey: Math.min(perKey, maxInFlight),
    maxQueued: config.WORKFLOW_ADMISSION_MAX_QUEUED,
    queueTimeoutMs: config.WORKFLOW_ADMISSION_QUEUE_TIMEOUT_MS,
  };
}

/** Reconciles a worker runs at once: as set, else as many as its pool has connections (decision 107). */
export function reconcileConcurrencyOf(config: WorkflowConfig): number {
  return config.WORKFLOW_RECONCILE_CONCURRENCY ?? config.WORKFLOW_DB_POOL_SIZE;
}
