import type { ManagedProcess } from '../../data/managed-process';
import type { ProfileStore } from '../../data/profile-store';
import { RuntimeKeySource } from '../../data/runtime-key-source';

/** How often the runtime looks whether its profile was re-pulled with a new runtime key. */
const KEY_CHECK_INTERVAL_MS = 1_000;

export interface FollowRuntimeKeyInput {
  profile: ProfileStore;
  runtimeInstanceId: string;
  /** The key in use now. */
  current: () => string;
  /** Makes the runtime's own hub calls use the new key. */
  use: (apiKey: string) => void;
  /** The processes that read the key from their environment, restarted with it in this order. */
  services: Array<{ proc: ManagedProcess; env: Record<string, string> }>;
  graceMs: number;
  stopping: () => boolean;
  log: (line: string) => void;
}

/**
 * Follows the profile's runtime key: a re-pull on this host writes a new key, and the runtime's hub calls use
 * it from the next call while the relay and the router (which read the key from their environment) restart
 * with it one after the other. The previous key stays valid for the rotation's overlap, so no heartbeat fails
 * on the way. A pull for another host is not followed. Returns the function that stops following (and waits
 * for a switch under way).
 */
export async function followRuntimeKey(input: FollowRuntimeKeyInput): Promise<() => Promise<void>> {
  const source = new RuntimeKeySource(input.profile);
  await source.prime();
  const check = async () => {
    const pulled = await source.changed().catch(() => null);
    if (!pulled || pulled.apiKey === input.current() || input.stopping()) return;
    if (pulled.runtimeInstanceId && pulled.runtimeInstanceId !== input.runtimeInstanceId) {
      input.log(
        `runtime key: the profile was pulled for another host (${pulled.runtimeInstanceId}); this runtime keeps its key for ${input.runtimeInstanceId}`,
      );
      return;
    }
    input.use(pulled.apiKey);
    const prefix = /^svc_([a-z0-9]+)_/.exec(pulled.apiKey)?.[1] ?? 'unknown';
    input.log(
      `runtime key: the profile was re-pulled; switching to key ${prefix} (relay and console router restart with it)`,
    );
    for (const { proc, env } of input.services) {
      if (input.stopping()) return;
      proc.setEnv({ ...env, SVC_WORKSPACE_API_KEY: pulled.apiKey });
      await proc.restartNow(input.graceMs);
    }
  };
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(check).catch(() => undefined);
  }, KEY_CHECK_INTERVAL_MS);
  return async () => {
    clearInterval(timer);
    await running.catch(() => undefined);
  };
}
