import { BaseCommand } from '../../base-command';
import { drainLines } from '../../presenters/runtime';
import { changeHostDrain } from '../../use-cases/runtime/change-host-drain';
import type { HostDrainReport } from '../../use-cases/runtime/change-host-drain';

export default class RuntimeResume extends BaseCommand<typeof RuntimeResume> {
  static override summary = 'End this runtime host’s drain: it takes spawns and stages again.';

  static override description =
    'Asks the hub to end the drain of the profile’s host; the running `svc runtime up` lets its relay take ' +
    'spawns again within a heartbeat. Agents the drain stopped stay stopped (start them again with ' +
    '`svc start`, or let spawns place new ones). A fresh `svc runtime up` does the same by itself.';

  static override examples = ['<%= config.bin %> <%= command.id %>'];

  public async run(): Promise<HostDrainReport> {
    const report = await changeHostDrain({
      store: this.store(),
      env: process.env,
      clientName: this.clientName(),
      action: 'resume',
    });
    for (const line of drainLines(report)) this.log(line);
    return report;
  }
}
