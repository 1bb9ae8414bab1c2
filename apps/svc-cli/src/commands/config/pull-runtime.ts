import { BaseCommand } from '../../base-command';
import { presentPulledRuntime } from '../../presenters/accounts';
import { pullRuntimeConfig, runtimeInstanceIdFromEnv } from '../../use-cases/config/pull-runtime-config';
import type { PullRuntimeResult } from '../../use-cases/config/pull-runtime-config';

export default class ConfigPullRuntime extends BaseCommand<typeof ConfigPullRuntime> {
  static override summary = "Pull this runtime host's config and secrets from the hub.";

  static override description =
    'Fetches the runtime config of the host named by SVC_RUNTIME_INSTANCE_ID (an rti_… id; optional when the ' +
    'workspace has one host) with your participant token. The hub audits the pull and mints a new runtime key ' +
    'for the host. The non-secret part goes to the profile (with pulled_at); SVC_RELAY_TOKEN and ' +
    'SVC_WORKSPACE_API_KEY go to the runtime env file (mode 0600). Nothing secret is printed.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'SVC_RUNTIME_INSTANCE_ID=rti_01hx… <%= config.bin %> <%= command.id %> --json',
  ];

  public async run(): Promise<PullRuntimeResult> {
    const runtimeInstanceId = runtimeInstanceIdFromEnv(process.env.SVC_RUNTIME_INSTANCE_ID);
    const { hub, profile } = await this.participantHub();
    const result = await this.progress('Pulling the runtime config', () =>
      pullRuntimeConfig({ hub, workspace: profile.workspace, store: this.store(), runtimeInstanceId }),
    );
    for (const line of presentPulledRuntime(result)) this.log(line);
    return result;
  }
}
