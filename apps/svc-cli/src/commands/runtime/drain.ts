import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { drainLines } from '../../presenters/runtime';
import { changeHostDrain } from '../../use-cases/runtime/change-host-drain';
import type { HostDrainReport } from '../../use-cases/runtime/change-host-drain';

export default class RuntimeDrain extends BaseCommand<typeof RuntimeDrain> {
  static override summary = 'Drain this runtime host: no new spawns or stages; its agents finish, then stop.';

  static override description =
    'Asks the hub to drain the profile’s host. From then on the host is not spawn ready, the workflow engine ' +
    'gives new stages to agents on other hosts and the relay refuses spawns (409 runtime_host_draining). The ' +
    'running `svc runtime up` stops each agent once it holds no open stage; the host is then drained (shown on ' +
    'Networks). Stop or upgrade the runtime then; a fresh `svc runtime up` takes work again (or `svc runtime ' +
    'resume` without a restart). With --wait, returns when the host is drained.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --wait --timeout 1800 --json',
  ];

  static override flags = {
    wait: Flags.boolean({ description: 'Wait until the host is drained.' }),
    timeout: Flags.integer({
      description: 'With --wait: seconds to wait before failing with drain_timeout.',
      default: 600,
      min: 1,
    }),
  };

  public async run(): Promise<HostDrainReport> {
    const report = await changeHostDrain({
      store: this.store(),
      env: process.env,
      clientName: this.clientName(),
      action: 'drain',
      waitMs: this.flags.wait ? this.flags.timeout * 1000 : undefined,
      progress: (label, work) => this.progress(label, work),
    });
    for (const line of drainLines(report)) this.log(line);
    return report;
  }
}
