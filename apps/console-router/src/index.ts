export { createConsoleRouterService } from './app';
export type { ConsoleRouterService, ConsoleRouterServiceOptions } from './app';
export { consoleRouterEnvSchema, loadConsoleRouterConfig } from './env';
export type { ConsoleRouterConfig } from './env';
