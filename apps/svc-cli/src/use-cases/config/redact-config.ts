import type { ProfileStore } from '../../data/profile-store';
import { redact } from '../../domain/redact';
import { readLocalConfig } from './read-local-config';
import type { LocalConfig } from './read-local-config';

/**
 * `svc config redact`: the full local config (profile, runtime env file, environment, agents' local states)
 * with every token, API key, provider credential and relay token replaced, safe to paste into an issue.
 */
export async function redactConfig(store: ProfileStore, env: NodeJS.ProcessEnv): Promise<LocalConfig> {
  return redact(await readLocalConfig(store, env));
}
