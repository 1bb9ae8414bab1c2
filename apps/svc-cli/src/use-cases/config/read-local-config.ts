import { promises as fs } from 'node:fs';
import { listAgentStates } from '../../data/agent-state';
import type { AgentLocalState } from '../../data/agent-state';
import { parseEnvFile } from '../../data/profile-store';
import type { Profile, ProfileStore } from '../../data/profile-store';
import type { ConfigPaths } from '../../domain/config-paths';

/** Everything svc keeps on this host for one profile, secrets included: callers mask or redact it. */
export interface LocalConfig {
  paths: ConfigPaths;
  profile: Profile;
  /** Every `KEY=value` of the runtime env file (null when there is none). */
  runtime_env: Record<string, string> | null;
  /** The variables of this process that svc reads. */
  environment: Record<string, string | null>;
  agents: AgentLocalState[];
}

const ENVIRONMENT_KEYS = [
  'SVC_RUNTIME_INSTANCE_ID',
  'SVC_AGENT_WORKDIR_ROOT',
  'SVC_WORKSPACE_API_KEY',
  'SVC_RELAY_TOKEN',
  'SVC_CONFIG_DIR',
] as const;

export async function readLocalConfig(store: ProfileStore, env: NodeJS.ProcessEnv): Promise<LocalConfig> {
  const profile = await store.read();
  let runtimeEnv: Record<string, string> | null = null;
  await store.readRuntimeSecrets(); // re-applies 0600 to the file when it exists
  try {
    runtimeEnv = parseEnvFile(await fs.readFile(store.paths.runtime_env_path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const environment: Record<string, string | null> = {};
  for (const key of ENVIRONMENT_KEYS) environment[key] = env[key] ?? null;
  return {
    paths: store.paths,
    profile,
    runtime_env: runtimeEnv,
    environment,
    agents: await listAgentStates(store.paths.state_dir),
  };
}
