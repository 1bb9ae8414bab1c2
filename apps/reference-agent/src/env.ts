import path from 'node:path';
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
 * reported by variable name, never by value. `serve` is set only when `AGENT_SERVE_PORT` is; `runtime` holds
 * the runtime credential (with its expiry) and the runtime home when they are set.
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
    /** Issuer of the hub's tokens (default `HUB_URL`), checked on console tickets and agent tokens. */
    HUB_ISSUER: optional(z.string().min(1)),
    /** When set, the agent serves its console on 127.0.0.1:<port> (0 = any free port). */
    AGENT_SERVE_PORT: optional(z.coerce.number().int().min(0).max(65535)),
    /** The terminal's working directory (default the process's working directory). */
    AGENT_WORKDIR: optional(z.string().min(1)),
    /** The key the host's console router proves itself with; without it, routed calls are refused. */
    AGENT_CONSOLE_PROXY_KEY: optional(envFields.secret(32)),
    /** The runtime credential the hub issued at start; the agent refreshes it before it expires. */
    AGENT_RUNTIME_CREDENTIAL: optional(envFields.secret(32)),
    /** When that credential expires (ISO 8601 with an offset, as the hub returns it). */
    AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: optional(z.iso.datetime({ offset: true })),
    /** An owner-only directory where the runtime keeps `runtime-state.json`. */
    AGENT_RUNTIME_HOME: optional(
      z.string().refine((value) => path.isAbsolute(value), 'must be an absolute path'),
    ),
  })
  .superRefine((env, ctx) => {
    if (
      (env.AGENT_RUNTIME_CREDENTIAL === undefined) !==
      (env.AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT === undefined)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: [
          env.AGENT_RUNTIME_CREDENTIAL === undefined
            ? 'AGENT_RUNTIME_CREDENTIAL'
            : 'AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT',
        ],
        message: 'AGENT_RUNTIME_CREDENTIAL and AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT are set together',
      });
    }
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
    hubIssuer: env.HUB_ISSUER ?? env.HUB_URL,
    serve:
      env.AGENT_SERVE_PORT === undefined
        ? undefined
        : {
            port: env.AGENT_SERVE_PORT,
            workdir: path.resolve(env.AGENT_WORKDIR ?? process.cwd()),
            proxyKey: env.AGENT_CONSOLE_PROXY_KEY,
          },
    runtime: {
      credential:
        env.AGENT_RUNTIME_CREDENTIAL === undefined || env.AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT === undefined
          ? undefined
          : {
              token: env.AGENT_RUNTIME_CREDENTIAL,
              expiresAt: new Date(env.AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT),
            },
      home: env.AGENT_RUNTIME_HOME === undefined ? undefined : path.resolve(env.AGENT_RUNTIME_HOME),
    },
  }));

export type ReferenceAgentConfig = z.output<typeof referenceAgentEnvSchema>;

/** Parses the agent's configuration; a bad value throws a ConfigError naming the variable. */
export function loadReferenceAgentConfig(env: NodeJS.ProcessEnv = process.env): ReferenceAgentConfig {
  return loadConfig('reference-agent', referenceAgentEnvSchema, env);
}
