import { BaseCommand } from '../../../base-command';
import { relayAddressFlags } from '../../../relay-flags';
import { relayAddress } from '../../../domain/relay-address';
import { readRelayStatus } from '../../../use-cases/runtime/read-relay-status';
import type { RelayStatusReport } from '../../../use-cases/runtime/read-relay-status';

export default class InternalRelayStatus extends BaseCommand<typeof InternalRelayStatus> {
  static override summary =
    'Show the relay’s status and its daemon pid file; exit 1 when it does not answer.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json',
  ];

  static override flags = {
    ...relayAddressFlags,
  };

  public async run(): Promise<RelayStatusReport> {
    const profile = await this.readProfile();
    const report = await readRelayStatus(
      this.store().paths.state_dir,
      relayAddress(this.flags, profile.runtime),
    );
    const s = report.status;
    this.log(
      `relay           ${report.url}: pid ${s.pid}, ${s.ready ? 'ready' : 'NOT READY'}, version ${s.runtime_version}, up ${Math.round(s.uptime_seconds)} s`,
    );
    this.log(`daemon pid file ${report.daemon.pid_file}: ${report.daemon.pid ?? 'no live daemon'}`);
    return report;
  }
}
