import { z } from 'zod';
import { envFields, loadConfig, metricsPortField, parseSecretBoxKeys } from '@svc/service-kit';

const schema = z.object({
  HUB_HOST: envFields.host(),
  HUB_PORT: envFields.port(4000),
  DATABASE_URL: envFields.postgresUrl().default('postgresql://postgres@127.0.0.1:5432/svc_hub'),
  /** Base URL clients reach the hub at; also the `iss` of every token. */
  HUB_PUBLIC_URL: envFields.httpUrl().default('http://127.0.0.1:4000'),
  /** Base URL of the Workflow API, for the integration contract's `servers`. */
  HUB_WORKFLOW_PUBLIC_URL: envFields.httpUrl().default('http://127.0.0.1:4100'),
  /** `id:base64(32 bytes)[,id:base64…]`; the first key seals new secrets. */
  HUB_ENCRYPTION_KEYS: z.string().refine((value) => {
    try {
      parseSecretBoxKeys(value);
      return true;
    } catch {
      return false;
    }
  }, 'must be id:base64 with 32-byte keys, comma-separated'),
  /** Credential other services present on /internal/v1 routes. */
  HUB_SERVICE_TOKEN: envFields.secret(32),
  HUB_PARTICIPANT_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  /** Lifetime of an agent token (`AGENT_TOKEN`); agents refresh before it ends. */
  HUB_AGENT_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  /** Providers whose hosted authorization the hub owns (comma list, e.g. `anthropic,openai`). */
  HUB_MANAGED_PROVIDERS: z
    .string()
    .default('')
    .transform((value) => [
      ...new Set(
        value
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(z.array(z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'provider names are lower-case [a-z0-9-]'))),
  /** Break-glass/development: allow server-local provider auth when no hosted or workspace credential exists. */
  HUB_SERVER_LOCAL_PROVIDER_AUTH: envFields.boolean(false),
  /** Lifetime of a runtime credential; at most 15 minutes. */
  HUB_RUNTIME_CREDENTIAL_TTL_SECONDS: z.coerce.number().int().min(60).max(900).default(600),
  /** The tunnel provider of runtime environments when a provisioning request names none. */
  HUB_TUNNEL_PROVIDER: z.enum(['local', 'cloudflare']).default('local'),
  /** Cloudflare's v4 API (a local fake in tests). */
  HUB_CLOUDFLARE_API_URL: envFields.httpUrl().default('https://api.cloudflare.com/client/v4'),
  HUB_CLOUDFLARE_ACCOUNT_ID: z
    .string()
    .regex(/^[A-Za-z0-9]{1,64}$/)
    .optional(),
  HUB_CLOUDFLARE_ZONE_ID: z
    .string()
    .regex(/^[A-Za-z0-9]{1,64}$/)
    .optional(),
  /** The zone's domain; runtime environments get one-label hostnames under it. */
  HUB_CLOUDFLARE_ZONE_NAME: z
    .string()
    .regex(
      /^(?=.{1,200}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
      'must be a lower-case domain',
    )
    .optional(),
  /** The Cloudflare API token sealed with HUB_ENCRYPTION_KEYS (`node dist/seal-config-secret.js`). */
  HUB_CLOUDFLARE_API_TOKEN_SEALED: z.string().min(1).optional(),
  /** Agent spawns: the timeout of one relay call, the time a spawn may take, how long a spawn request waits
   * for the outcome before answering 202, and how often open spawns of a stopped hub are resumed. */
  HUB_SPAWN_RELAY_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(30),
  HUB_SPAWN_DEADLINE_SECONDS: z.coerce.number().positive().max(3600).default(150),
  HUB_SPAWN_WAIT_SECONDS: z.coerce.number().min(0).max(60).default(20),
  HUB_SPAWN_SWEEP_INTERVAL_SECONDS: z.coerce.number().positive().max(3600).default(10),
  /** How often the presence sweep marks silent hosts and their agents lost (one replica at a time does it). */
  HUB_PRESENCE_SWEEP_INTERVAL_SECONDS: z.coerce.number().positive().max(300).default(5),
  HUB_BODY_LIMIT: z.string().default('1mb'),
  HUB_DB_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  /** A separate listener (on HUB_HOST) for `GET /metrics`; when set, the public listener does not serve it. */
  HUB_METRICS_PORT: metricsPortField(),
  /**
   * Redis for credential notices: API-key revocations and membership changes reach the other services (and
   * hub replicas) within a second. Unset: nothing is announced; their caches expire on their own (≤ 30 s).
   */
  HUB_REDIS_URL: envFields.redisUrl().optional(),
  /**
   * Express `trust proxy` behind a load balancer: a hop count (`1`), `true`, or addresses/subnets
   * (`loopback, 10.0.0.0/8`). Sign-in limits count per client address (decision 47), so a hub behind a proxy
   * must set it, or every client shares the proxy's address.
   */
  HUB_TRUST_PROXY: z
    .string()
    .min(1)
    .optional()
    .transform((value) =>
      value === undefined
        ? undefined
        : /^\d+$/.test(value)
          ? Number(value)
          : value === 'true'
            ? true
            : value === 'false'
              ? false
              : value,
    ),
  /** The services' Redis key prefix (the Workflow API's WORKFLOW_QUEUE_PREFIX); notices use `<prefix>:credential-notices`. */
  HUB_REDIS_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/)
    .default('svc'),
  LOG_LEVEL: envFields.logLevel(),
});

/** Cloudflare settings come as a whole; the default provider can only be one that is configured. */
const checked = schema.superRefine((config, ctx) => {
  const cloudflare = [
    config.HUB_CLOUDFLARE_ACCOUNT_ID,
    config.HUB_CLOUDFLARE_ZONE_ID,
    config.HUB_CLOUDFLARE_ZONE_NAME,
    config.HUB_CLOUDFLARE_API_TOKEN_SEALED,
  ];
  const set = cloudflare.filter((value) => value !== undefined).length;
  if (set !== 0 && set !== cloudflare.length) {
    ctx.addIssue({
      code: 'custom',
      path: ['HUB_CLOUDFLARE_API_TOKEN_SEALED'],
      message:
        'set all of HUB_CLOUDFLARE_ACCOUNT_ID, HUB_CLOUDFLARE_ZONE_ID, HUB_CLOUDFLARE_ZONE_NAME and HUB_CLOUDFLARE_API_TOKEN_SEALED, or none',
    });
  }
  if (config.HUB_TUNNEL_PROVIDER === 'cloudflare' && set !== cloudflare.length) {
    ctx.addIssue({
      code: 'custom',
      path: ['HUB_TUNNEL_PROVIDER'],
      message: 'cloudflare needs the HUB_CLOUDFLARE_* settings',
    });
  }
});

export type HubConfig = z.infer<typeof schema>;

export function loadHubConfig(env: NodeJS.ProcessEnv = process.env): HubConfig {
  return loadConfig('hub-api', checked, env);
}
