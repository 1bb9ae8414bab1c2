import type { Interfaces } from '@oclif/core';
import { Command, Flags, ux } from '@oclif/core';
import { createHubClient } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import { ensureOwnerOnlyDir, writeSecretFile } from './data/secret-files';
import { ProfileFileError, ProfileStore } from './data/profile-store';
import type { Profile } from './data/profile-store';
import { authRequired, CliError } from './domain/cli-error';
import type { ConfigPaths } from './domain/config-paths';
import {
  assertValidProfileName,
  DEFAULT_PROFILE,
  defaultConfigDir,
  resolveConfigPaths,
  resolveInsideDir,
} from './domain/config-paths';
import { EXIT } from './domain/exit-codes';
import { toCliError } from './domain/to-cli-error';

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>;
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

/** What `--json` prints on success: one document on stdout. */
export interface JsonSuccess<R> {
  ok: true;
  result: R;
}

/** What `--json` prints on failure (still on stdout, still one document), with the exit code. */
export interface JsonFailure {
  ok: false;
  error: { code: string; message: string; fix: string | null; exit_code: number } & Record<string, unknown>;
}

/** Refresh a participant token this long before it expires (and call it "near expiry" in doctor). */
export const PARTICIPANT_TOKEN_MARGIN_MS = 60_000;

/**
 * The base of every `svc` command: `--json` on every command (one JSON envelope on stdout, errors too), the
 * global `--profile` and `--config-dir` flags, documented exit codes ({@link EXIT}), the profile's files, and
 * typed hub clients for the profile's participant or runtime credential.
 *
 * A command extends `BaseCommand<typeof MyCommand>`, reads `this.flags` / `this.args` (parsed in `init`), and
 * returns its result from `run()`; with `--json` that result is printed as `{ "ok": true, "result": … }`,
 * otherwise the command prints human lines with `this.log`. Errors become one line on stderr (or the JSON
 * failure envelope) and the exit code of the {@link CliError}.
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
      description:
        'Directory holding svc configuration (created with mode 0700 when first written). ' +
        'Default: $SVC_CONFIG_DIR, else $XDG_CONFIG_HOME/svc, else ~/.config/svc.',
      env: 'SVC_CONFIG_DIR',
      default: async () => defaultConfigDir(),
      defaultHelp: async () => '~/.config/svc',
      helpGroup: 'GLOBAL',
    }),
  };

  protected flags!: BaseFlags<T>;
  protected args!: BaseArgs<T>;
  private profileStore: ProfileStore | undefined;

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

  protected override toSuccessJson(result: unknown): JsonSuccess<unknown> {
    return { ok: true, result };
  }

  protected override toErrorJson(error: unknown): JsonFailure {
    const e = toCliError(error);
    return {
      ok: false,
      error: {
        code: e.code,
        message: e.message,
        fix: e.fix ?? null,
        exit_code: e.exit,
        ...(e.details ?? {}),
      },
    };
  }

  /**
   * Every failure ends here: with `--json` the failure envelope goes to stdout; otherwise one line (and the fix
   * on a second line) goes to stderr. Never a stack trace; the exit code comes from the error.
   */
  protected override async catch(error: Interfaces.CommandError): Promise<void> {
    const e = toCliError(error);
    process.exitCode = e.exit;
    try {
      ux.action.stop('failed');
    } catch {
      // no spinner was running
    }
    if (this.jsonEnabled()) {
      this.logJson(this.toErrorJson(e));
    } else {
      process.stderr.write(`svc: ${e.message} [${e.code}]\n`);
      if (e.fix) process.stderr.write(`  fix: ${e.fix}\n`);
    }
  }

  /** Runs `work` behind a spinner on stderr (none with `--json` or when stderr is not a terminal). */
  protected async progress<R>(label: string, work: () => Promise<R>): Promise<R> {
    const show = !this.jsonEnabled() && process.stderr.isTTY === true;
    if (show) ux.action.start(label);
    try {
      const result = await work();
      if (show) ux.action.stop('done');
      return result;
    } catch (error) {
      if (show) ux.action.stop('failed');
      throw error;
    }
  }

  /** Where the selected profile's configuration lives. Touches no files. */
  protected configPaths(): ConfigPaths {
    return resolveConfigPaths({ configDir: this.flags['config-dir'], profile: this.flags.profile });
  }

  /** The selected profile's files. */
  protected store(): ProfileStore {
    this.profileStore ??= new ProfileStore(this.configPaths());
    return this.profileStore;
  }

  /** The profile; a damaged file is a one-line error naming it. */
  protected async readProfile(): Promise<Profile> {
    try {
      return await this.store().read();
    } catch (error) {
      if (error instanceof ProfileFileError) {
        throw new CliError({ code: 'profile_invalid', message: error.message, fix: 'svc config reset' });
      }
      throw error;
    }
  }

  /** The profile's hub URL and workspace, or "log in first" (exit 4). */
  protected async requireLogin(): Promise<Required<Pick<Profile, 'hub_url' | 'workspace'>> & Profile> {
    const profile = await this.readProfile();
    if (!profile.hub_url || !profile.workspace) {
      throw authRequired(
        `profile "${this.flags.profile}" is not logged in`,
        'svc login --hub-url <url> --workspace <workspace>',
      );
    }
    return profile as Required<Pick<Profile, 'hub_url' | 'workspace'>> & Profile;
  }

  /** A hub client with the profile's participant token; exit 4 when there is none or it has expired. */
  protected async participantHub(): Promise<{
    hub: HubClient;
    profile: Profile & { hub_url: string; workspace: string };
  }> {
    const profile = await this.requireLogin();
    const participant = profile.participant;
    if (!participant) throw authRequired(`profile "${this.flags.profile}" has no participant token`);
    if (Date.parse(participant.expires_at) <= Date.now()) {
      throw authRequired(
        `the participant token of profile "${this.flags.profile}" expired at ${participant.expires_at}`,
      );
    }
    return {
      hub: createHubClient({
        baseUrl: profile.hub_url,
        token: participant.token,
        clientName: this.clientName(),
      }),
      profile,
    };
  }

  /**
   * A hub client with the runtime's workspace API key: `SVC_WORKSPACE_API_KEY` from the environment, else the
   * one `config pull-runtime` stored. Exit 4 when there is none.
   */
  protected async runtimeHub(): Promise<{
    hub: HubClient;
    profile: Profile & { hub_url: string; workspace: string };
    apiKey: string;
  }> {
    const profile = await this.requireLogin();
    const apiKey =
      process.env.SVC_WORKSPACE_API_KEY || (await this.store().readRuntimeSecrets()).SVC_WORKSPACE_API_KEY;
    if (!apiKey) {
      throw authRequired(
        `profile "${this.flags.profile}" has no workspace API key for the runtime`,
        'svc config pull-runtime',
      );
    }
    return {
      hub: createHubClient({ baseUrl: profile.hub_url, apiKey, clientName: this.clientName() }),
      profile,
      apiKey,
    };
  }

  protected clientName(): string {
    return `svc-cli/${this.config.version}`;
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
      throw new CliError({
        code: 'path_outside_config',
        message: `refusing to write a secret file: ${(error as Error).message}`,
      });
    }
    await this.ensureConfigDir();
    await writeSecretFile(file, contents);
    return file;
  }
}

export { EXIT };
