import { z } from 'zod';
import { envFields, loadConfig, metricsPortField } from '@svc/service-kit';

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
    /**
     * A file holding the workspace API key (one word), read at start (it wins over SVC_WORKSPACE_API_KEY) and
     * again on SIGHUP, so a rotated runtime key is taken without a restart. `svc runtime up` writes it owner-only.
     */
    SVC_WORKSPACE_API_KEY_FILE: optional(z.string().regex(/^\//, 'must be an absolute path')),
    SVC_RELAY_TOKEN: optional(envFields.secret(32)),
    SVC_RUNTIME_INSTANCE_ID: optional(z.string().regex(/^rti_[A-Za-z0-9_-]{1,100}$/, 'must be an rti_… id')),
    SVC_RELAY_PUBLIC_URL: optional(envFields.httpUrl()),
    SVC_RELAY_ALLOWED_HOSTS: optional(z.string()),
    SVC_RELAY_SVC_ENTRY: optional(z.string().regex(/^\//, 'must be an absolute path')),
    SVC_RELAY_COMMANDS: optional(z.string()),
    SVC_RELAY_CHILD_ENV: optional(z.string()),
    SVC_RELAY_SPAWN_LOG: optional(z.string().regex(/^\//, 'must be an absolute path')),
    /** The marker file whose presence means the host drains (written by `svc runtime up`). */
    SVC_RELAY_DRAIN_FILE: optional(z.string().regex(/^\//, 'must be an absolute path')),
    SVC_RELAY_START_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
    SVC_RELAY_STOP_GRACE_MS: z.coerce.number().int().min(10).max(120_000).default(5_000),
    SVC_RELAY_SPAWN_WAIT_MS: z.coerce.number().int().min(0).max(120_000).default(20_000),
    SVC_CONFIG_DIR: optional(z.string()),
    SVC_PROFILE: optional(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be a profile name')),
    RELAY_METRICS_PORT: metricsPortField(),
    LOG_LEVEL: envFields.logLevel(),
  })
  .transform((env, ctx) => {
    const commands = parseCommands(env.SVC_RELAY_COMMANDS);
    if (typeof commands === 'string') {
      ctx.addIssue({ code: 'custom', path: ['SVC_RELAY_COMMANDS'], message: commands });
      return z.NEVER;
    }
    const childEnvKeep = listOf(env.SVC_RELAY_CHILD_ENV);
    const refused = childEnvKeep.filter((name) => NEVER_TO_CHILD.has(name));
    if (refused.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['SVC_RELAY_CHILD_ENV'],
        message: `may not pass ${refused.join(', ')} to spawned processes`,
      });
      return z.NEVER;
    }
    return {
      host: env.RELAY_HOST,
      port: env.RELAY_PORT,
      hubUrl: env.SVC_HUB_URL,
      workspace: env.SVC_WORKSPACE,
      workspaceApiKey: env.SVC_WORKSPACE_API_KEY,
      workspaceApiKeyFile: env.SVC_WORKSPACE_API_KEY_FILE,
      relayToken: env.SVC_RELAY_TOKEN,
      runtimeInstanceId: env.SVC_RUNTIME_INSTANCE_ID,
      /** Host names besides loopback that requests may name in `Host` (the public relay hostname first). */
      allowedHosts: [
        ...(env.SVC_RELAY_PUBLIC_URL ? [new URL(env.SVC_RELAY_PUBLIC_URL).hostname.toLowerCase()] : []),
        ...listOf(env.SVC_RELAY_ALLOWED_HOSTS).map((h) => h.toLowerCase()),
      ],
      spawn: {
        svcEntry: env.SVC_RELAY_SVC_ENTRY,
        commands,
        childEnvKeep,
        logFile: env.SVC_RELAY_SPAWN_LOG,
        drainFile: env.SVC_RELAY_DRAIN_FILE,
        startTimeoutMs: env.SVC_RELAY_START_TIMEOUT_MS,
        stopGraceMs: env.SVC_RELAY_STOP_GRACE_MS,
        waitMs: env.SVC_RELAY_SPAWN_WAIT_MS,
        configDir: env.SVC_CONFIG_DIR,
        profile: env.SVC_PROFILE,
      },
      /** Serve `/metrics` on a listener of its own (not reached through the tunnel) instead of the relay's. */
      metricsPort: env.RELAY_METRICS_PORT,
      logLevel: env.LOG_LEVEL,
    };
  });

/** Variables that never reach a spawned process, whatever the configuration says. */
export const NEVER_TO_CHILD = new Set([
  'SVC_RELAY_TOKEN',
  'SVC_WORKSPACE_API_KEY',
  'SVC_WORKSPACE_API_KEY_FILE',
]);

function listOf(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

/**
 * The host's allow-list of agent commands: a JSON object from command key to the program and arguments `svc
 * start --command` runs (`null`: the agent program installed with svc). Unset: only `default`, svc's own agent.
 */
function parseCommands(value: string | undefined): Record<string, string | null> | string {
  if (value === undefined) return { default: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return 'must be a JSON object from command key to command line (or null)';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return 'must be a JSON object from command key to command line (or null)';
  }
  const out: Record<string, string | null> = {};
  for (const [key, command] of Object.entries(parsed)) {
    if (!/^[a-z][a-z0-9_-]{0,39}$/.test(key))
      return `command key "${key}" must match ^[a-z][a-z0-9_-]{0,39}$`;
    if (command !== null && (typeof command !== 'string' || command.trim() === '')) {
      return `command "${key}" must be a non-empty command line or null`;
    }
    out[key] = command as string | null;
  }
  return out;
}

export type RelayConfig = z.output<typeof relayEnvSchema>;

/** Parses the relay's configuration; a bad value throws a ConfigError naming the variable (never its value). */
export function loadRelayConfig(env: NodeJS.ProcessEnv = process.env): RelayConfig {
  return loadConfig('relay', relayEnvSchema, env);
}
