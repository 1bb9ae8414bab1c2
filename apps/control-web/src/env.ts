import { z } from 'zod';
import { envFields, loadConfig, parseSecretBoxKeys } from '@svc/service-kit';

/** An optional setting; an empty value (`X=` in an env file) counts as not set. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

const listOf = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.length > 0);

/**
 * The control web app's server. It serves the built single-page app, keeps the participant's session in a
 * sealed HttpOnly cookie and forwards the hub's and the Workflow API's public paths under `/hub` and
 * `/workflow`, so the browser talks to one origin only.
 */
export const controlWebEnvSchema = z
  .object({
    CONTROL_WEB_HOST: envFields.host('127.0.0.1'),
    CONTROL_WEB_PORT: envFields.port(4200),
    /** Where people open the app (`https://control.example.com`); https makes the session cookie Secure. */
    CONTROL_WEB_PUBLIC_URL: optional(envFields.httpUrl()),
    CONTROL_WEB_HUB_URL: envFields.httpUrl(),
    CONTROL_WEB_WORKFLOW_URL: envFields.httpUrl(),
    /** `id:base64key[,…]` (32-byte keys): the first seals session cookies, every one opens them. */
    CONTROL_WEB_SESSION_KEYS: z.string().min(1),
    /**
     * Console router origins the page may open terminal WebSockets to (comma-separated `https://…` or
     * `http://…`; each is allowed as itself and as its `wss://`/`ws://` twin in `connect-src`).
     */
    CONTROL_WEB_CONSOLE_ORIGINS: optional(z.string()),
    /** Express `trust proxy` (behind a load balancer): `true`, a hop count, or addresses. */
    CONTROL_WEB_TRUST_PROXY: optional(z.string()),
    /** The built single-page app (default: `dist/public` beside the server). */
    CONTROL_WEB_STATIC_DIR: optional(z.string().regex(/^\//, 'must be an absolute path')),
    LOG_LEVEL: envFields.logLevel(),
  })
  .transform((env, ctx) => {
    let sessionKeys;
    try {
      sessionKeys = parseSecretBoxKeys(env.CONTROL_WEB_SESSION_KEYS);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['CONTROL_WEB_SESSION_KEYS'], message: (error as Error).message });
      return z.NEVER;
    }
    const consoleOrigins: string[] = [];
    for (const entry of listOf(env.CONTROL_WEB_CONSOLE_ORIGINS)) {
      const origin = originOf(entry);
      if (!origin) {
        ctx.addIssue({
          code: 'custom',
          path: ['CONTROL_WEB_CONSOLE_ORIGINS'],
          message: 'each entry must be an http(s) origin such as https://console.example.com',
        });
        return z.NEVER;
      }
      consoleOrigins.push(origin);
    }
    const publicUrl = new URL(
      env.CONTROL_WEB_PUBLIC_URL ?? `http://${env.CONTROL_WEB_HOST}:${env.CONTROL_WEB_PORT}`,
    );
    return {
      host: env.CONTROL_WEB_HOST,
      port: env.CONTROL_WEB_PORT,
      publicOrigin: publicUrl.origin,
      secure: publicUrl.protocol === 'https:',
      hubUrl: env.CONTROL_WEB_HUB_URL.replace(/\/+$/, ''),
      workflowUrl: env.CONTROL_WEB_WORKFLOW_URL.replace(/\/+$/, ''),
      sessionKeys,
      consoleOrigins,
      trustProxy: trustProxyOf(env.CONTROL_WEB_TRUST_PROXY),
      staticDir: env.CONTROL_WEB_STATIC_DIR,
      logLevel: env.LOG_LEVEL,
    };
  });

function originOf(entry: string): string | undefined {
  try {
    const url = new URL(entry);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.pathname !== '/' || url.search || url.hash || url.username) return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

function trustProxyOf(value: string | undefined): boolean | number | string | undefined {
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}

export type ControlWebConfig = z.output<typeof controlWebEnvSchema>;

/** Parses the server's configuration; a bad value throws a ConfigError naming the variable (never its value). */
export function loadControlWebConfig(env: NodeJS.ProcessEnv = process.env): ControlWebConfig {
  return loadConfig('control-web', controlWebEnvSchema, env);
}
