import { z } from 'zod';

/** A configuration problem; start-up prints its message as one line and exits non-zero. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the app's environment with its zod schema. Only each app's `src/env.ts` calls this; everything
 * else receives the parsed config as an argument.
 */
export function loadConfig<S extends z.ZodType>(
  appName: string,
  schema: S,
  source: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new ConfigError(`${appName}: invalid configuration: ${issues.join('; ')}`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function urlWithProtocols(protocols: string[], what: string) {
  return z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `must be a ${what} URL (${protocols.map((p) => p.replace(':', '://')).join(' or ')}…)`,
  );
}

/** Field builders shared by every app's env schema. */
export const envFields = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  host: (fallback = '127.0.0.1') => z.string().min(1).default(fallback),
  logLevel: () => z.enum(LOG_LEVELS).default('info'),
  postgresUrl: () => urlWithProtocols(['postgres:', 'postgresql:'], 'PostgreSQL'),
  redisUrl: () => urlWithProtocols(['redis:', 'rediss:'], 'Redis'),
  httpUrl: () => urlWithProtocols(['http:', 'https:'], 'HTTP(S)'),
  /** A secret with a minimum length, so a placeholder like "changeme" is refused. */
  secret: (minLength = 32) => z.string().min(minLength, `must be at least ${minLength} characters`),
  boolean: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default(fallback ? 'true' : 'false')
      .transform((value) => value === 'true' || value === '1' || value === 'yes'),
};
