import { z } from 'zod';
import { envFields, loadConfig, metricsPortField } from '@svc/service-kit/http';

/** An optional setting; an empty value (`NAME=` in an env file) counts as not set. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

function count(min: number, max: number, fallback: number) {
  return z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().int().min(min).max(max).default(fallback),
  );
}

function milliseconds(min: number, max: number, fallback: number) {
  return z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().int().min(min).max(max).default(fallback),
  );
}

const runtimeInstanceId = z
  .string()
  .refine(
    (value) => !value.startsWith('wrt_'),
    'wrt_… is a runtime bundle id; set the host inventory id (rti_…) the hub gave the runtime host',
  )
  .refine((value) => /^rti_[A-Za-z0-9_-]{1,100}$/.test(value), 'must be a runtime host id (rti_…)');

/** A comma-separated list of web origins: scheme, host and port only (`https://control.example.com`). */
const pageOrigins = z.string().transform((value, ctx) => {
  const origins: string[] = [];
  for (const item of value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(item);
    } catch {
      url = undefined;
    }
    if (
      !url ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.origin !== item.replace(/\/+$/, '')
    ) {
      ctx.addIssue({
        code: 'custom',
        message: `'${item}' is not an http(s) origin (scheme://host[:port], no path)`,
      });
      return z.NEVER;
    }
    origins.push(url.origin);
  }
  return origins;
});

const publicBaseUrl = envFields.httpUrl().transform((value) => new URL(value));

/**
 * The console router's environment. The host's identity and key (`SVC_RUNTIME_INSTANCE_ID`,
 * `SVC_WORKSPACE_API_KEY`) and its console secret may be missing: the router still starts, and `/readyz`
 * names what is missing.
 */
export const consoleRouterEnvSchema = z
  .object({
    CONSOLE_ROUTER_HOST: envFields.host('127.0.0.1'),
    CONSOLE_ROUTER_PORT: envFields.port(8790),
    /** The hub: its signing keys (`/.well-known/jwks.json`) and the host's console route table. */
    HUB_URL: envFields.httpUrl(),
    /** Issuer of the hub's tokens (default `HUB_URL`). */
    HUB_ISSUER: optional(z.string().min(1)),
    /** The host's inventory id at the hub (`rti_…`). */
    SVC_RUNTIME_INSTANCE_ID: optional(runtimeInstanceId),
    /** The host's runtime key: a workspace API key holding `runtime-config:read`. */
    SVC_WORKSPACE_API_KEY: optional(z.string().min(1)),
    /**
     * A file holding the host's runtime key (one word), read at start (it wins over SVC_WORKSPACE_API_KEY) and
     * again on SIGHUP, so a rotated key is taken without a restart. `svc runtime up` writes it owner-only.
     */
    SVC_WORKSPACE_API_KEY_FILE: optional(z.string().regex(/^\//, 'must be an absolute path')),
    /** The public base URL the tunnel serves: its host is the allowed public `Host`, its origin the allowed WebSocket `Origin`. */
    CONSOLE_ROUTER_PUBLIC_BASE_URL: optional(publicBaseUrl),
    /**
     * Origins of other sites' pages that may open consoles over WebSockets, comma-separated (the control web
     * app's, e.g. `https://control.example.com`). The public origin and loopback pages are always allowed.
     */
    CONSOLE_ROUTER_ALLOWED_ORIGINS: optional(pageOrigins),
    /** The host's console secret; each agent's proxy key is derived from it. */
    CONSOLE_ROUTER_UPSTREAM_SECRET: optional(envFields.secret(32)),
    /**
     * The services' Redis, where the hub announces that a host's route table changed (decision 73): the table is
     * reloaded at once on each announcement, and still polled every CONSOLE_ROUTER_POLL_MS. Unset: polling,
     * `POST /routes/refresh` and requests for agents the table does not know are what reload it.
     */
    CONSOLE_ROUTER_REDIS_URL: optional(envFields.redisUrl()),
    /** The services' Redis key prefix (the hub's HUB_REDIS_PREFIX). */
    CONSOLE_ROUTER_REDIS_PREFIX: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/)
      .default('svc'),
    /** How often the route table is polled (a 304 costs almost nothing). */
    CONSOLE_ROUTER_POLL_MS: milliseconds(100, 3_600_000, 5_000),
    /** A proxied WebSocket with no bytes either way for this long is closed. */
    CONSOLE_ROUTER_WS_IDLE_MS: milliseconds(1_000, 86_400_000, 600_000),
    /**
     * WebSockets the router holds open at once; one more is refused before the upgrade (503
     * `console_capacity_reached`). Each costs two file descriptors (client and agent).
     */
    CONSOLE_ROUTER_WS_MAX_CONNECTIONS: count(1, 1_000_000, 10_000),
    /** WebSockets open at once to one agent's route; one more is closed at once with 1008. */
    CONSOLE_ROUTER_WS_MAX_PER_ROUTE: count(1, 1_000_000, 1_000),
    /** WebSockets open at once for one caller (a participant or an agent), all routes together; then 1008. */
    CONSOLE_ROUTER_WS_MAX_PER_CALLER: count(1, 1_000_000, 100),
    /** The largest WebSocket message a caller may send to an agent (fragments summed); larger: 1009. */
    CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES: count(125, 1_073_741_824, 1_048_576),
    /**
     * A separate listener (on CONSOLE_ROUTER_HOST) for `GET /metrics`; when set, the router's listener (the one
     * the tunnel forwards to) does not serve it.
     */
    CONSOLE_ROUTER_METRICS_PORT: metricsPortField(),
    LOG_LEVEL: envFields.logLevel(),
  })
  .transform((env) => ({
    host: env.CONSOLE_ROUTER_HOST,
    port: env.CONSOLE_ROUTER_PORT,
    hubUrl: env.HUB_URL,
    hubIssuer: env.HUB_ISSUER ?? env.HUB_URL,
    runtimeInstanceId: env.SVC_RUNTIME_INSTANCE_ID,
    runtimeKey: env.SVC_WORKSPACE_API_KEY,
    runtimeKeyFile: env.SVC_WORKSPACE_API_KEY_FILE,
    publicBaseUrl: env.CONSOLE_ROUTER_PUBLIC_BASE_URL?.toString().replace(/\/+$/, ''),
    allowedOrigins: env.CONSOLE_ROUTER_ALLOWED_ORIGINS ?? [],
    upstreamSecret: env.CONSOLE_ROUTER_UPSTREAM_SECRET,
    pollMs: env.CONSOLE_ROUTER_POLL_MS,
    redisUrl: env.CONSOLE_ROUTER_REDIS_URL,
    redisPrefix: env.CONSOLE_ROUTER_REDIS_PREFIX,
    wsIdleMs: env.CONSOLE_ROUTER_WS_IDLE_MS,
    wsLimits: {
      maxConnections: env.CONSOLE_ROUTER_WS_MAX_CONNECTIONS,
      maxPerRoute: env.CONSOLE_ROUTER_WS_MAX_PER_ROUTE,
      maxPerCaller: env.CONSOLE_ROUTER_WS_MAX_PER_CALLER,
      maxMessageBytes: env.CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES,
    },
    metricsPort: env.CONSOLE_ROUTER_METRICS_PORT,
    logLevel: env.LOG_LEVEL,
  }));

export type ConsoleRouterConfig = z.output<typeof consoleRouterEnvSchema>;

/** Parses the console router's configuration; a bad value throws a ConfigError naming the variable. */
export function loadConsoleRouterConfig(env: NodeJS.ProcessEnv = process.env): ConsoleRouterConfig {
  return loadConfig('console-router', consoleRouterEnvSchema, env);
}
