import { BaseCommand } from '../../../base-command';
import { relayAddressFlags } from '../../../relay-flags';
import { relayAddress } from '../../../domain/relay-address';
import { checkRelayHealth } from '../../../use-cases/runtime/check-relay-health';
import type { RelayHealth } from '../../../use-cases/runtime/check-relay-health';

export default class InternalRelayHealth extends BaseCommand<typeof InternalRelayHealth> {
  static override summary = 'Check the relay’s /healthz and /readyz; exit 1 when it is not ready.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json',
  ];

  static override flags = {
    ...relayAddressFlags,
  };

  public async run(): Promise<RelayHealth> {
    const profile = await this.readProfile();
    const health = await checkRelayHealth(relayAddress(this.flags, profile.runtime));
    this.log(`relay ${health.url}: live, ready`);
    for (const [name, value] of Object.entries(health.checks)) this.log(`  ${name}: ${value}`);
    return health;
  }
}
