import { z } from 'zod';
import { envFields, loadConfig } from '@svc/service-kit';

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
  WORKFLOW_BODY_LIMIT: z.string().default('1mb'),
  WORKFLOW_DB_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  LOG_LEVEL: envFields.logLevel(),
});

export type WorkflowConfig = z.infer<typeof schema>;

export function loadWorkflowConfig(env: NodeJS.ProcessEnv = process.env): WorkflowConfig {
  return loadConfig('workflow-api', schema, env);
}
