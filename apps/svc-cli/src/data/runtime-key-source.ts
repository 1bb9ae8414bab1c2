import fs from 'node:fs/promises';
import type { ProfileStore } from './profile-store';

/** The runtime key a re-pull left in the profile, for the host the runtime runs. */
export interface PulledKey {
  apiKey: string;
  runtimeInstanceId: string | undefined;
}

/**
 * Watches the profile's runtime env file (where `svc config pull-runtime` writes the runtime key) by its
 * modification time, and reads the key when the file changed. Cheap enough to ask every second.
 */
export class RuntimeKeySource {
  private lastStamp: string | null = null;

  constructor(private readonly store: ProfileStore) {}

  /** Remembers the file as it is now, so only later pulls count as changes. */
  async prime(): Promise<void> {
    this.lastStamp = await this.stamp();
  }

  /** The key of the profile when its runtime env file changed since the last call, else null. */
  async changed(): Promise<PulledKey | null> {
    const stamp = await this.stamp();
    if (stamp === this.lastStamp) return null;
    this.lastStamp = stamp;
    const [secrets, profile] = await Promise.all([this.store.readRuntimeSecrets(), this.store.read()]);
    if (!secrets.SVC_WORKSPACE_API_KEY) return null;
    return {
      apiKey: secrets.SVC_WORKSPACE_API_KEY,
      runtimeInstanceId: profile.runtime?.runtime_instance_id,
    };
  }

  private async stamp(): Promise<string | null> {
    try {
      const stat = await fs.stat(this.store.paths.runtime_env_path);
      return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      return null;
    }
  }
}
