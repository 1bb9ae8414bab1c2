import { AgentHostCommand } from '../agent-host-command';
import { listLines } from '../presenters/agents';
import { listAgents } from '../use-cases/agents/list-agents';
import type { ListAgentsResult } from '../use-cases/agents/list-agents';

export default class List extends AgentHostCommand<typeof List> {
  static override summary = 'List the agents of this runtime host with their processes.';

  static override description =
    'The agents the hub attributes to this host (its rti_ id from the pulled runtime config), merged with the ' +
    "local runtime's supervised processes (state, pid, serve port) and the console URL of each.";

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json',
  ];

  public async run(): Promise<ListAgentsResult> {
    const context = await this.hostContext();
    const result = await listAgents(context);
    for (const line of listLines(result)) this.log(line);
    return result;
  }
}
