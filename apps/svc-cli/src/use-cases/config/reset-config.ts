import { promises as fs } from 'node:fs';
import type { ProfileStore } from '../../data/profile-store';
import { promptLine, stdinIsTerminal } from '../../data/account-prompts';
import { CliError, usageError } from '../../domain/cli-error';

export interface ResetResult {
  profile: string;
  scope: 'runtime' | 'profile';
  /** Files removed (paths only). */
  removed: string[];
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.stat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * `svc config reset`: with `runtime`, drops only the pulled runtime config and the runtime env file; otherwise
 * removes the profile and its runtime env file, after a confirmation on a terminal or with `yes`. Agents'
 * local state (running agents) is left alone: `svc stop` clears it.
 */
export async function resetConfig(input: {
  store: ProfileStore;
  runtimeOnly: boolean;
  yes: boolean;
}): Promise<ResetResult> {
  const { paths } = input.store;
  const envExisted = await exists(paths.runtime_env_path);
  if (input.runtimeOnly) {
    const profileExisted = await exists(paths.profile_path);
    if (profileExisted) await input.store.resetRuntime();
    else await fs.rm(paths.runtime_env_path, { force: true });
    return { profile: paths.profile, scope: 'runtime', removed: envExisted ? [paths.runtime_env_path] : [] };
  }
  if (!input.yes) {
    if (!stdinIsTerminal()) {
      throw usageError(
        'confirmation_required',
        `resetting profile "${paths.profile}" removes its login and runtime secrets`,
        'add --yes to confirm',
      );
    }
    const answer = (
      await promptLine(`Remove profile "${paths.profile}" (${paths.profile_path})? [y/N] `)
    ).trim();
    if (!/^y(es)?$/i.test(answer)) {
      throw new CliError({ code: 'cancelled', message: 'nothing was removed', fix: 'add --yes to confirm' });
    }
  }
  const removed: string[] = [];
  for (const file of [paths.profile_path, paths.runtime_env_path]) {
    if (await exists(file)) {
      await fs.rm(file, { force: true });
      removed.push(file);
    }
  }
  return { profile: paths.profile, scope: 'profile', removed };
}
