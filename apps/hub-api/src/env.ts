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
  HUB_BODY_LIMIT: z.string().default('1mb'),
  HUB_DB_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  LOG_LEVEL: envFields.logLevel(),
});

export type HubConfig = z.infer<typeof schema>;

export function loadHubConfig(env: NodeJS.ProcessEnv = process.env): HubConfig {
  return loadConfig('hub-api', schema, env);
}
