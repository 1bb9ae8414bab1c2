import { z } from 'zod';
import { envFields, loadConfig, parseSecretBoxKeys } from '@svc/service-kit';

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
  HUB_BODY_LIMIT: z.string().default('1mb'),
  HUB_DB_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  LOG_LEVEL: envFields.logLevel(),
});

export type HubConfig = z.infer<typeof schema>;

export function loadHubConfig(env: NodeJS.ProcessEnv = process.env): HubConfig {
  return loadConfig('hub-api', schema, env);
}
