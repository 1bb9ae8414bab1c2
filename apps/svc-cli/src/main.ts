// Subpaths rather than the package index, which loads every part of oclif (about 60 more modules) up front.
import { execute } from '@oclif/core/execute';
import { settings } from '@oclif/core/settings';
import { hoistGlobalFlags } from './domain/hoist-global-flags';

/**
 * The global option flags of every command (`BaseCommand.baseFlags`), by name. Kept here as plain strings so
 * that starting the CLI loads neither the base command nor what it imports (hub clients, contracts): `svc
 * --version` and `svc --help` read only oclif and the manifest. test/package.test.ts checks that this list
 * equals the base command's option flags.
 */
export const GLOBAL_OPTION_FLAGS: readonly string[] = ['profile', 'config-dir'];

/**
 * Runs the `svc` command line: `bin/run.js` calls this with the process arguments.
 * Errors are printed by oclif's handler (message only, no stack unless DEBUG is set) and set the exit code.
 */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // Always run the compiled commands in dist/, even when NODE_ENV is "development" or "test":
  // otherwise oclif looks for ts-node/tsx to load src/ and warns when they are absent.
  settings.enableAutoTranspile = false;
  await execute({ dir: __dirname, args: hoistGlobalFlags(argv, GLOBAL_OPTION_FLAGS) });
}
