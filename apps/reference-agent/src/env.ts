import { z } from 'zod';
import { envFields, loadConfig } from '@svc/service-kit';

/** An optional setting; an empty value (`AGENT_HANDLER=` in an env file) counts as not set. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

function integer(min: number, max: number, fallback: number) {
  return z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().int().min(min).max(max).default(fallback),
  );
}

/**
 * The reference agent's environment. `AGENT_TOKEN` is the agent JWT the hub issued at start; a bad value is
 * reported by variable name, never by value.
 */
export const referenceAgentEnvSchema = z
  .object({
    AGENT_TOKEN: envFields.secret(32),
    HUB_URL: envFields.httpUrl().default('http://127.0.0.1:4000'),
    WORKFLOW_URL: envFields.httpUrl().default('http://127.0.0.1:4100'),
    AGENT_HANDLER: optional(z.string()),
    AGENT_POLL_WAIT_SECONDS: integer(0, 30, 20),
    AGENT_CONCURRENCY: integer(1, 64, 16),
    // The hub's roster only offers agents with a heartbeat in the last 90 s.
    AGENT_HUB_HEARTBEAT_SECONDS: integer(1, 60, 15),
    LOG_LEVEL: envFields.logLevel(),
  })
  .transform((env) => ({
    token: env.AGENT_TOKEN,
    hubUrl: env.HUB_URL,
    workflowUrl: env.WORKFLOW_URL,
    handlerPath: env.AGENT_HANDLER,
    pollWaitSeconds: env.AGENT_POLL_WAIT_SECONDS,
    concurrency: env.AGENT_CONCURRENCY,
    hubHeartbeatSeconds: env.AGENT_HUB_HEARTBEAT_SECONDS,
    logLevel: env.LOG_LEVEL,
  }));

export type ReferenceAgentConfig = z.output<typeof referenceAgentEnvSchema>;

/** Parses the agent's configuration; a bad value throws a ConfigError naming the variable. */
export function loadReferenceAgentConfig(env: NodeJS.ProcessEnv = process.env): ReferenceAgentConfig {
  return loadConfig('reference-agent', referenceAgentEnvSchema, env);
}
