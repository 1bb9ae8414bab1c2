import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { presentReset } from '../../presenters/accounts';
import { resetConfig } from '../../use-cases/config/reset-config';
import type { ResetResult } from '../../use-cases/config/reset-config';

export default class ConfigReset extends BaseCommand<typeof ConfigReset> {
  static override summary = 'Remove the runtime config (--runtime) or the whole profile.';

  static override description =
    'With --runtime, removes only the pulled runtime config and the runtime env file (SVC_RELAY_TOKEN, ' +
    'SVC_WORKSPACE_API_KEY) and keeps the login. Without it, removes the profile and its runtime env file: ' +
    "asks for confirmation on a terminal, needs --yes otherwise. Agents' local state is left to svc stop.";

  static override examples = [
    '<%= config.bin %> <%= command.id %> --runtime',
    '<%= config.bin %> <%= command.id %> --yes --json',
  ];

  static override flags = {
    runtime: Flags.boolean({ description: 'Remove only the runtime part of the profile.', default: false }),
    yes: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
  };

  public async run(): Promise<ResetResult> {
    const result = await resetConfig({
      store: this.store(),
      runtimeOnly: this.flags.runtime,
      yes: this.flags.yes,
    });
    for (const line of presentReset(result)) this.log(line);
    return result;
  }
}
