export { buildApp } from './app';
export type { ConsoleRouter, ConsoleRouterAppOptions } from './app';
export { consoleRouterEnvSchema, loadConsoleRouterConfig } from './env';
export type { ConsoleRouterConfig } from './env';
