import { execute, settings } from '@oclif/core';
import { BaseCommand } from './base-command';
import { hoistGlobalFlags } from './domain/hoist-global-flags';

/**
 * Runs the `svc` command line: `bin/run.js` calls this with the process arguments.
 * Errors are printed by oclif's handler (message only, no stack unless DEBUG is set) and set the exit code.
 */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // Always run the compiled commands in dist/, even when NODE_ENV is "development" or "test":
  // otherwise oclif looks for ts-node/tsx to load src/ and warns when they are absent.
  settings.enableAutoTranspile = false;
  await execute({ dir: __dirname, args: hoistGlobalFlags(argv, Object.keys(BaseCommand.baseFlags)) });
}
