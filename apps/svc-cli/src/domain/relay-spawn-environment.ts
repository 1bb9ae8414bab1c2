/** Host settings of relay spawns that svc hands to the relay when they are set. */
const RELAY_SPAWN_SETTINGS = [
  'SVC_RELAY_COMMANDS',
  'SVC_RELAY_CHILD_ENV',
  'SVC_RELAY_ALLOWED_HOSTS',
  'SVC_RELAY_START_TIMEOUT_MS',
  'SVC_RELAY_STOP_GRACE_MS',
  'SVC_RELAY_SPAWN_WAIT_MS',
  'SVC_AGENT_WORKDIR_ROOT',
  'SVC_WORKFLOW_URL',
];

/**
 * What the relay needs to run `svc start` for a spawn: svc itself, this profile, the host id, its spawn log,
 * its public URL (the one `Host` besides loopback it serves), the host's spawn settings, and the variables the
 * host allows spawned agents to keep (`SVC_RELAY_CHILD_ENV`), so the relay can hand them on.
 */
export function relaySpawnEnvironment(input: {
  runtimeInstanceId: string;
  relayPublicUrl: string | null;
  svcEntry: string;
  configDir: string;
  profile: string;
  spawnLog: string;
  hostEnv: NodeJS.ProcessEnv;
}): Record<string, string> {
  const env: Record<string, string> = {
    SVC_RUNTIME_INSTANCE_ID: input.runtimeInstanceId,
    SVC_RELAY_SVC_ENTRY: input.svcEntry,
    SVC_CONFIG_DIR: input.configDir,
    SVC_PROFILE: input.profile,
    SVC_RELAY_SPAWN_LOG: input.spawnLog,
  };
  if (input.relayPublicUrl) env.SVC_RELAY_PUBLIC_URL = input.relayPublicUrl;
  const kept = (input.hostEnv.SVC_RELAY_CHILD_ENV ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  for (const name of [...RELAY_SPAWN_SETTINGS, ...kept]) {
    const value = input.hostEnv[name];
    if (value !== undefined && !(name in env)) env[name] = value;
  }
  return env;
}
