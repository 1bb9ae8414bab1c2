import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { controlStatusLines } from '../../presenters/runtime';
import { readRuntimeStatus } from '../../use-cases/runtime/read-runtime-status';
import type { RuntimeStatusReport } from '../../use-cases/runtime/read-runtime-status';

export default class RuntimeStatus extends BaseCommand<typeof RuntimeStatus> {
  static override summary =
    'Show the runtime: its bundle, whether runtime up runs here, the host at the hub.';

  static override description =
    'Reads the bundle (with --bundle: its wrt_… id, workspace, hub), asks the local runtime over its control ' +
    'socket, and asks the hub for the host (heartbeat age, readiness). Shows no secret.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --bundle ./runtime.env --json',
  ];

  static override flags = {
    bundle: Flags.string({
      description: 'A runtime bundle’s runtime.env to read (its secrets are never shown).',
    }),
  };

  public async run(): Promise<RuntimeStatusReport> {
    const report = await this.progress('Reading the runtime status', () =>
      readRuntimeStatus({
        store: this.store(),
        profile: this.flags.profile,
        env: process.env,
        bundlePath: this.flags.bundle,
        clientName: this.clientName(),
      }),
    );
    if (report.bundle) {
      this.log(
        `bundle          ${report.bundle.path}: ${report.bundle.bundle_id ?? 'no wrt_… id'}, workspace ${report.bundle.workspace ?? '-'}, hub ${report.bundle.hub_url ?? '-'}`,
      );
    }
    this.log(
      `configured      host ${report.configured.runtime_instance_id ?? '-'}, workspace ${report.configured.workspace ?? '-'}, hub ${report.configured.hub_url ?? '-'}`,
    );
    if (report.local.running) for (const line of controlStatusLines(report.local.status)) this.log(line);
    else this.log(`runtime up      not running (${report.local.detail})`);
    if (report.hub.reachable) {
      const r = report.hub.readiness;
      this.log(
        `at the hub      heartbeat ${report.hub.heartbeat_age_seconds ?? '-'} s ago, spawn ${r.spawn_ready ? 'ready' : 'NOT READY'}` +
          `${r.reasons.length ? ` (${r.reasons.join('; ')})` : ''}`,
      );
    } else {
      this.log(`at the hub      unknown (${report.hub.detail})`);
    }
    return report;
  }
}
