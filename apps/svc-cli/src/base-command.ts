import type { Interfaces } from '@oclif/core';
import { Command, Flags } from '@oclif/core';
import type { ConfigPaths } from './lib/config-paths';
import {
  assertValidProfileName,
  DEFAULT_PROFILE,
  defaultConfigDir,
  resolveConfigPaths,
  resolveInsideDir,
} from './lib/config-paths';
import { ensureOwnerOnlyDir, writeSecretFile } from './lib/secret-files';

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>;
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

/**
 * The base of every `svc` command: `--json` on every command, the global `--profile` and
 * `--config-dir` flags, and owner-only storage for whatever a command keeps on disk.
 *
 * A command extends `BaseCommand<typeof MyCommand>`, reads `this.flags` / `this.args` (already
 * parsed in `init`), and returns its JSON result from `run()`; oclif prints that result when
 * `--json` is given, while `this.log` output is suppressed in that mode.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true;

  static override baseFlags = {
    profile: Flags.string({
      description: 'Profile whose configuration the command uses.',
      default: DEFAULT_PROFILE,
      helpGroup: 'GLOBAL',
      parse: async (input) => assertValidProfileName(input),
    }),
    'config-dir': Flags.string({
      description: 'Directory holding svc configuration (created with mode 0700 when first written).',
      env: 'SVC_CONFIG_DIR',
      default: async () => defaultConfigDir(),
      defaultHelp: async () => '~/.config/svc',
      helpGroup: 'GLOBAL',
    }),
  };

  protected flags!: BaseFlags<T>;
  protected args!: BaseArgs<T>;

  public override async init(): Promise<void> {
    await super.init();
    const { args, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    });
    this.flags = flags as BaseFlags<T>;
    this.args = args as BaseArgs<T>;
  }

  /** Where the selected profile's configuration lives. Touches no files. */
  protected configPaths(): ConfigPaths {
    return resolveConfigPaths({ configDir: this.flags['config-dir'], profile: this.flags.profile });
  }

  /** Creates the config directory if needed and makes it owner-only (0700); returns its path. */
  protected async ensureConfigDir(): Promise<string> {
    const { config_dir } = this.configPaths();
    await ensureOwnerOnlyDir(config_dir);
    return config_dir;
  }

  /**
   * Writes a file under the config directory with mode 0600, creating owner-only (0700)
   * directories on the way. `relativePath` must stay inside the config directory.
   */
  protected async writeSecretFile(relativePath: string, contents: string | Uint8Array): Promise<string> {
    let file: string;
    try {
      file = resolveInsideDir(this.configPaths().config_dir, relativePath);
    } catch (error) {
      this.error(`refusing to write a secret file: ${(error as Error).message}`);
    }
    await this.ensureConfigDir();
    await writeSecretFile(file, contents);
    return file;
  }
}
