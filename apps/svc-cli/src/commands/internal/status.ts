import { BaseCommand } from '../../base-command';
import { controlStatusLines } from '../../presenters/runtime';
import { readInternalStatus } from '../../use-cases/runtime/read-internal-status';
import type { InternalStatus } from '../../use-cases/runtime/read-internal-status';

export default class InternalStatusCommand extends BaseCommand<typeof InternalStatusCommand> {
  static override summary =
    'Show the running runtime (relay, console router, heartbeat, agents) and local agents.';

  static override description =
    'Asks `svc runtime up` over its control socket; exit 1 with the fix when it is not running. Lists the ' +
    'agents with local state on this host too (never their tokens).';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json',
  ];

  public async run(): Promise<InternalStatus> {
    const status = await readInternalStatus(this.store().paths.state_dir);
    for (const line of controlStatusLines(status.runtime)) this.log(line);
    for (const a of status.local_agents) {
      this.log(
        `local ${a.name.padEnd(10)} ${a.agent_id}  ${a.supervised ? 'supervised' : 'not supervised'}  since ${a.started_at}`,
      );
    }
    return status;
  }
}
