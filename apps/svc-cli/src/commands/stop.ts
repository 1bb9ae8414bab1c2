import { Args } from '@oclif/core';
import { AgentHostCommand } from '../agent-host-command';
import { stopLines } from '../presenters/agents';
import { stopAgent } from '../use-cases/agents/stop-agent';
import type { StopAgentResult } from '../use-cases/agents/stop-agent';

export default class Stop extends AgentHostCommand<typeof Stop> {
  static override summary = 'Stop an agent of this host; its id is kept for a restart.';

  static override description =
    "Stops the agent's supervised process, marks it stopped (offline) at the hub and clears its local running " +
    'state. The agent id is kept: `svc start --name <agent>` starts the same agent again. Agents run as plain ' +
    'processes on this platform, so there is no sandbox container to remove.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> reviewer',
    '<%= config.bin %> --profile prod stop reviewer --json',
  ];

  static override args = {
    'agent-name': Args.string({ description: 'Name of the agent to stop.', required: true }),
  };

  public async run(): Promise<StopAgentResult> {
    const context = await this.hostContext();
    const result = await this.progress(`Stopping ${this.args['agent-name']}`, () =>
      stopAgent({ ...context, name: this.args['agent-name'] }),
    );
    for (const line of stopLines(result)) this.log(line);
    return result;
  }
}
