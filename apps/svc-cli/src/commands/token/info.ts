import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { presentTokenInfo } from '../../presenters/tokens';
import { describeAgentToken } from '../../use-cases/tokens/describe-agent-token';
import type { AgentTokenInfo } from '../../use-cases/tokens/describe-agent-token';

export default class TokenInfo extends BaseCommand<typeof TokenInfo> {
  static override summary = "Show the expiry, subject, audience and scopes of an agent's AGENT_TOKEN.";

  static override description =
    "Decodes the AGENT_TOKEN in the agent's local state on this host (written by svc start). Decoding only: " +
    'it does not ask the hub (svc token health does) and never prints the token.';

  static override examples = ['<%= config.bin %> <%= command.id %> --name reviewer --json'];

  static override flags = {
    name: Flags.string({ description: 'Agent name.', required: true }),
  };

  public async run(): Promise<AgentTokenInfo> {
    const info = await describeAgentToken(this.configPaths().state_dir, this.flags.name);
    for (const line of presentTokenInfo(info)) this.log(line);
    return info;
  }
}
