import { z } from 'zod';
import { envFields, loadConfig } from '@svc/service-kit';

/** An optional setting; an empty value (`SVC_HUB_URL=` in an env file) counts as not set. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

/**
 * The relay's environment. The hub URL, the workspace and its API key are optional on purpose: the relay
 * starts without them and `/readyz` names what is missing.
 */
export const relayEnvSchema = z
  .object({
    RELAY_HOST: envFields.host('127.0.0.1'),
    RELAY_PORT: envFields.port(8787),
    SVC_HUB_URL: optional(envFields.httpUrl()),
    SVC_WORKSPACE: optional(z.string()),
    SVC_WORKSPACE_API_KEY: optional(z.string()),
    SVC_RELAY_TOKEN: optional(envFields.secret(32)),
    LOG_LEVEL: envFields.logLevel(),
  })
  .transform((env) => ({
    host: env.RELAY_HOST,
    port: env.RELAY_PORT,
    hubUrl: env.SVC_HUB_URL,
    workspace: env.SVC_WORKSPACE,
    workspaceApiKey: env.SVC_WORKSPACE_API_KEY,
    relayToken: env.SVC_RELAY_TOKEN,
    logLevel: env.LOG_LEVEL,
  }));

export type RelayConfig = z.output<typeof relayEnvSchema>;

/** Parses the relay's configuration; a bad value throws a ConfigError naming the variable (never its value). */
export function loadRelayConfig(env: NodeJS.ProcessEnv = process.env): RelayConfig {
  return loadConfig('relay', relayEnvSchema, env);
}
