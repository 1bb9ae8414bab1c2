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
  /**
   * Hands the new key to the relay and the router without restarting them: writes it to their key file and sends
   * them SIGHUP, so open console WebSockets and spawns in flight go on.
   */
  handOver: (apiKey: string) => Promise<void>;
  stopping: () => boolean;
  log: (line: string) => void;
}

/**
 * Follows the profile's runtime key: a re-pull on this host writes a new key, and the runtime's hub calls use
 * it from the next call while the relay and the router re-read it from their key file on SIGHUP (same
 * processes: no console WebSocket drops, no spawn in flight is interrupted). The previous key stays valid for
 * the rotation's overlap, so no heartbeat fails on the way. A pull for another host is not followed. Returns
 * the function that stops following (and waits for a switch under way).
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
      `runtime key: the profile was re-pulled; switching to key ${prefix} (relay and console router re-read it, no restart)`,
    );
    try {
      await input.handOver(pulled.apiKey);
    } catch (error) {
      input.log(
        `runtime key: the relay and the console router could not be given the new key (${(error as NodeJS.ErrnoException).code ?? 'error'}); they keep the previous one`,
      );
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
