import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { presentPulledRuntime } from '../../presenters/accounts';
import {
  parseOverlap,
  pullRuntimeConfig,
  runtimeInstanceIdFromEnv,
} from '../../use-cases/config/pull-runtime-config';
import type { PullRuntimeResult } from '../../use-cases/config/pull-runtime-config';

export default class ConfigPullRuntime extends BaseCommand<typeof ConfigPullRuntime> {
  static override summary = "Pull this runtime host's config and secrets from the hub.";

  static override description =
    'Fetches the runtime config of the host named by SVC_RUNTIME_INSTANCE_ID (an rti_… id; optional when the ' +
    'workspace has one host) with your participant token; reading the config mints and revokes nothing. The ' +
    "runtime key this profile holds is kept while it is the host's current key; otherwise (another " +
    'configuration directory, a superseded key) or with --rotate-key the hub issues a new one, and the previous ' +
    'key stays valid for --overlap (default 24h; 0 revokes it now, for a leaked key). A running `svc runtime up` ' +
    'of this profile switches to the new key by itself; one elsewhere keeps working until the overlap ends and ' +
    'logs that its key was superseded. The non-secret part goes to the profile (with pulled_at); ' +
    'SVC_RELAY_TOKEN and SVC_WORKSPACE_API_KEY go to the runtime env file (mode 0600). Nothing secret is printed.';

  static override flags = {
    'rotate-key': Flags.boolean({
      description: 'Issue a new runtime key for the host even when this profile holds its current one.',
    }),
    overlap: Flags.string({
      description:
        'After a rotation, how long the previous runtime key stays valid: 0 (revoke now) or e.g. 24h, 90m (default 24h, at most 7d).',
    }),
  };

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --rotate-key --overlap 0',
    'SVC_RUNTIME_INSTANCE_ID=rti_01hx… <%= config.bin %> <%= command.id %> --json',
  ];

  public async run(): Promise<PullRuntimeResult> {
    const runtimeInstanceId = runtimeInstanceIdFromEnv(process.env.SVC_RUNTIME_INSTANCE_ID);
    const overlapSeconds = parseOverlap(this.flags.overlap);
    const { hub, profile } = await this.participantHub();
    const result = await this.progress('Pulling the runtime config', () =>
      pullRuntimeConfig({
        hub,
        workspace: profile.workspace,
        store: this.store(),
        runtimeInstanceId,
        rotateKey: this.flags['rotate-key'],
        overlapSeconds,
      }),
    );
    for (const line of presentPulledRuntime(result)) this.log(line);
    return result;
  }
}
