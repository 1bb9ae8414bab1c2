import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { presentTokenRefresh } from '../../presenters/tokens';
import { refreshAgentToken } from '../../use-cases/tokens/refresh-agent-token';
import type { AgentTokenRefreshResult } from '../../use-cases/tokens/refresh-agent-token';

export default class TokenRefresh extends BaseCommand<typeof TokenRefresh> {
  static override summary = "Exchange an agent's AGENT_TOKEN for a new one and store it locally.";

  static override description =
    "Calls the hub's refreshAgentToken with the agent's current token and writes the new one to the agent's " +
    'local state (mode 0600). The previous token stays valid until it expires, so a running process is not ' +
    'interrupted. Never prints a token.';

  static override examples = ['<%= config.bin %> <%= command.id %> --name reviewer'];

  static override flags = {
    name: Flags.string({ description: 'Agent name.', required: true }),
  };

  public async run(): Promise<AgentTokenRefreshResult> {
    const profile = await this.requireLogin();
    const result = await this.progress(`Refreshing the token of ${this.flags.name}`, () =>
      refreshAgentToken({
        stateDir: this.configPaths().state_dir,
        name: this.flags.name,
        hubUrl: profile.hub_url,
        clientName: this.clientName(),
      }),
    );
    for (const line of presentTokenRefresh(result)) this.log(line);
    return result;
  }
}
