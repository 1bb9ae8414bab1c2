import type { ProfileStore } from '../../data/profile-store';
import { secretPresence } from '../../domain/secret-presence';
import { readLocalConfig } from './read-local-config';

/** `svc config show`: the whole local config, each secret shown only as `present` or `absent`. */
export async function showConfig(
  store: ProfileStore,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, unknown>> {
  const config = await readLocalConfig(store, env);
  return secretPresence(config) as Record<string, unknown>;
}
