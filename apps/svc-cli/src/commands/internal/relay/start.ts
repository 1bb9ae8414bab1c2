import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base-command';
import { relayAddressFlags } from '../../../relay-flags';
import { relayAddress } from '../../../domain/relay-address';
import { startRelay } from '../../../use-cases/runtime/start-relay';
import type { RelayStartResult } from '../../../use-cases/runtime/start-relay';

export default class InternalRelayStart extends BaseCommand<typeof InternalRelayStart> {
  static override summary = 'Run the relay of this host (requires SVC_RELAY_TOKEN).';

  static override description =
    'Runs the relay in the foreground, or detached with --daemon (pid in <state dir>/relay.pid, output in ' +
    'relay.log, mode 0600). SVC_RELAY_TOKEN comes from the environment or the runtime env file ' +
    '(svc config pull-runtime); the hub URL, workspace and key from the profile. `svc runtime up` runs a relay ' +
    'itself; use this only for a relay on its own.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> --host 127.0.0.1 --port 8787',
    '<%= config.bin %> <%= command.id %> --host 127.0.0.1 --port 8787 --daemon --json',
  ];

  static override flags = {
    ...relayAddressFlags,
    daemon: Flags.boolean({ description: 'Run detached and return once it answers /healthz.' }),
  };

  public async run(): Promise<RelayStartResult> {
    const profile = await this.readProfile();
    const result = await startRelay({
      store: this.store(),
      address: relayAddress(this.flags, profile.runtime),
      daemon: this.flags.daemon,
      env: process.env,
      progress: (label, work) => this.progress(label, work),
    });
    if (result.mode === 'daemon')
      this.log(`relay running: pid ${result.pid}, ${result.url}, log ${result.log_file}`);
    return result;
  }
}
