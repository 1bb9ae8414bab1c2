export { buildApp } from './app';
export type { RelayAppOptions } from './app';
export { loadRelayConfig, relayEnvSchema } from './env';
export type { RelayConfig } from './env';
