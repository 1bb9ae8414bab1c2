import { z } from 'zod';
import { envFields, loadConfig } from '@svc/service-kit';

/** The console router's environment. */
export const consoleRouterEnvSchema = z
  .object({
    CONSOLE_ROUTER_HOST: envFields.host('127.0.0.1'),
    CONSOLE_ROUTER_PORT: envFields.port(8790),
    /** The hub whose signing keys (`/.well-known/jwks.json`) verify agent tokens. */
    HUB_URL: envFields.httpUrl(),
    LOG_LEVEL: envFields.logLevel(),
  })
  .transform((env) => ({
    host: env.CONSOLE_ROUTER_HOST,
    port: env.CONSOLE_ROUTER_PORT,
    hubUrl: env.HUB_URL,
    logLevel: env.LOG_LEVEL,
  }));

export type ConsoleRouterConfig = z.output<typeof consoleRouterEnvSchema>;

/** Parses the console router's configuration; a bad or missing value throws a ConfigError naming the variable. */
export function loadConsoleRouterConfig(env: NodeJS.ProcessEnv = process.env): ConsoleRouterConfig {
  return loadConfig('console-router', consoleRouterEnvSchema, env);
}
