import { promises as fs } from 'node:fs';
import type { HubApi } from '@svc/contracts';
import type { ConfigPaths } from '../domain/config-paths';
import { ensureOwnerOnlyDir, SECRET_FILE_MODE, writeSecretFile } from './secret-files';

export type RuntimeConfig = HubApi.components['schemas']['RuntimeConfig'];

/** The non-secret part of a pulled runtime config, kept in the profile. The secrets go to the runtime env file. */
export type PulledRuntime = Omit<RuntimeConfig, 'auth'> & {
  /** When the config was pulled (ISO 8601). */
  pulled_at: string;
};

/**
 * One profile's file (`profiles/<profile>.json`, mode 0600). The participant token is the only secret in it;
 * the runtime secrets live in the runtime env file next to it.
 */
export interface Profile {
  hub_url?: string;
  /** Workspace slug. */
  workspace?: string;
  participant?: {
    email: string;
    participant_id: string;
    token: string;
    expires_at: string;
  };
  runtime?: PulledRuntime;
}

/** What `runtime_env_path` holds: `KEY=value` lines, mode 0600. */
export interface RuntimeSecrets {
  SVC_RELAY_TOKEN?: string;
  SVC_WORKSPACE_API_KEY?: string;
}

const RUNTIME_SECRET_KEYS = ['SVC_RELAY_TOKEN', 'SVC_WORKSPACE_API_KEY'] as const;

/** Thrown when a profile or env file exists but cannot be read as one. */
export class ProfileFileError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file} is not a valid svc file (${reason}); fix or remove it (svc config reset)`);
    this.name = 'ProfileFileError';
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Parses `KEY=value` lines (no quoting, `#` comments); the format `runtime.env` files use. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line
      .slice(0, eq)
      .replace(/^export\s+/, '')
      .trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]!)) {
      value = value.slice(1, -1);
    }
    out[key] = value;
  }
  return out;
}

/**
 * Reads and writes one profile's files. Every write goes through {@link writeSecretFile} (0600 in a 0700
 * directory, atomic rename), and every read of an existing file re-applies 0600, so a file loosened by hand is
 * tightened the next time svc touches it.
 */
export class ProfileStore {
  constructor(readonly paths: ConfigPaths) {}

  async read(): Promise<Profile> {
    const text = await readIfExists(this.paths.profile_path);
    if (text === undefined) return {};
    await this.tighten(this.paths.profile_path);
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new Error('not a JSON object');
      }
      return parsed as Profile;
    } catch (error) {
      throw new ProfileFileError(this.paths.profile_path, (error as Error).message);
    }
  }

  async write(profile: Profile): Promise<void> {
    await writeSecretFile(this.paths.profile_path, `${JSON.stringify(profile, null, 2)}\n`);
  }

  /** Reads, applies `change`, writes back; returns the new profile. */
  async update(change: (profile: Profile) => Profile): Promise<Profile> {
    const next = change(await this.read());
    await this.write(next);
    return next;
  }

  async readRuntimeSecrets(): Promise<RuntimeSecrets> {
    const text = await readIfExists(this.paths.runtime_env_path);
    if (text === undefined) return {};
    await this.tighten(this.paths.runtime_env_path);
    const parsed = parseEnvFile(text);
    const out: RuntimeSecrets = {};
    for (const key of RUNTIME_SECRET_KEYS) if (parsed[key]) out[key] = parsed[key];
    return out;
  }

  async writeRuntimeSecrets(secrets: RuntimeSecrets): Promise<void> {
    const lines = ['# svc runtime secrets for this profile; keep this file 0600.'];
    for (const key of RUNTIME_SECRET_KEYS) if (secrets[key]) lines.push(`${key}=${secrets[key]}`);
    await writeSecretFile(this.paths.runtime_env_path, `${lines.join('\n')}\n`);
  }

  /** Removes the runtime part of the profile: the pulled config and the runtime secrets file. */
  async resetRuntime(): Promise<void> {
    const profile = await this.read();
    delete profile.runtime;
    await this.write(profile);
    await fs.rm(this.paths.runtime_env_path, { force: true });
  }

  /** The profile's state directory, created owner-only. */
  async stateDir(): Promise<string> {
    await ensureOwnerOnlyDir(this.paths.state_dir);
    return this.paths.state_dir;
  }

  private async tighten(file: string): Promise<void> {
    const stat = await fs.stat(file);
    if ((stat.mode & 0o777) !== SECRET_FILE_MODE) await fs.chmod(file, SECRET_FILE_MODE);
  }
}
