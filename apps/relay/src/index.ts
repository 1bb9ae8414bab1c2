export { createRelayService } from './app';
export type { RelayService, RelayServiceOptions } from './app';
export { loadRelayConfig, relayEnvSchema } from './env';
export type { RelayConfig } from './env';
