export { buildApp } from './app';
export type { ConsoleRouterAppOptions } from './app';
export { consoleRouterEnvSchema, loadConsoleRouterConfig } from './env';
export type { ConsoleRouterConfig } from './env';
