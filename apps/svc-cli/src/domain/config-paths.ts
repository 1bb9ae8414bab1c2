import os from 'node:os';
import path from 'node:path';

/** Name of the profile used when `--profile` is not given. */
export const DEFAULT_PROFILE = 'default';

/**
 * Profile names become file names, so they are restricted to a conservative set:
 * letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 64 characters.
 * This rules out path separators and `..` traversal.
 */
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface ConfigPaths {
  /** Absolute path of the owner-only configuration directory. */
  config_dir: string;
  /** Name of the selected profile. */
  profile: string;
  /** Absolute path of the selected profile's file (it may not exist yet). */
  profile_path: string;
  /** The profile's runtime secrets (`SVC_RELAY_TOKEN`, `SVC_WORKSPACE_API_KEY`), an env file with mode 0600. */
  runtime_env_path: string;
  /** Owner-only directory of the profile's runtime state: control socket, logs, agents' local state. */
  state_dir: string;
}

/**
 * `$XDG_CONFIG_HOME/svc` when XDG_CONFIG_HOME is an absolute path, else `~/.config/svc`; `$SVC_CONFIG_DIR`
 * (which wins over both) is applied by the `--config-dir` flag itself.
 */
export function defaultConfigDir(
  homeDir: string = os.homedir(),
  xdgConfigHome: string | undefined = process.env.XDG_CONFIG_HOME,
): string {
  if (xdgConfigHome && path.isAbsolute(xdgConfigHome)) return path.join(xdgConfigHome, 'svc');
  return path.join(homeDir, '.config', 'svc');
}

/** Returns the name unchanged when it is a valid profile name; throws an error naming the rule otherwise. */
export function assertValidProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new Error(
      `invalid profile name "${name}": use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
  return name;
}

/** Resolves where the configuration of `profile` lives; pure, touches no files. */
export function resolveConfigPaths(options: { configDir: string; profile: string }): ConfigPaths {
  const configDir = path.resolve(options.configDir);
  const profile = assertValidProfileName(options.profile);
  return {
    config_dir: configDir,
    profile,
    profile_path: path.join(configDir, 'profiles', `${profile}.json`),
    runtime_env_path: path.join(configDir, 'profiles', `${profile}.runtime.env`),
    state_dir: path.join(configDir, 'run', profile),
  };
}

/**
 * Resolves `relativePath` against `dir` and returns the absolute path, or throws when the result
 * would be `dir` itself or anywhere outside it (absolute paths, `..` segments).
 */
export function resolveInsideDir(dir: string, relativePath: string): string {
  const base = path.resolve(dir);
  const file = path.resolve(base, relativePath);
  const fromBase = path.relative(base, file);
  if (
    fromBase === '' ||
    fromBase === '..' ||
    fromBase.startsWith(`..${path.sep}`) ||
    path.isAbsolute(fromBase)
  ) {
    throw new Error(`${relativePath} is outside the directory ${base}`);
  }
  return file;
}
