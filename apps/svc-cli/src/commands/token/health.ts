import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base-command';
import { CliError } from '../../domain/cli-error';
import { EXIT } from '../../domain/exit-codes';
import { presentTokenHealth } from '../../presenters/tokens';
import { checkAgentTokenHealth } from '../../use-cases/tokens/check-agent-token-health';
import type { AgentTokenHealthResult } from '../../use-cases/tokens/check-agent-token-health';

export default class TokenHealth extends BaseCommand<typeof TokenHealth> {
  static override summary = "Ask the hub whether an agent's AGENT_TOKEN is valid, expired or revoked.";

  static override description =
    "Calls GET /api/v1/agents/me with the token from the agent's local state. Exit 0 when valid; exit 4 when " +
    'expired or revoked (error code agent_token_expired / agent_token_revoked, with the health in --json).';

  static override examples = ['<%= config.bin %> <%= command.id %> --name reviewer --json'];

  static override flags = {
    name: Flags.string({ description: 'Agent name.', required: true }),
  };

  public async run(): Promise<AgentTokenHealthResult> {
    const profile = await this.requireLogin();
    const result = await this.progress(`Asking the hub about ${this.flags.name}`, () =>
      checkAgentTokenHealth({
        stateDir: this.configPaths().state_dir,
        name: this.flags.name,
        hubUrl: profile.hub_url,
        clientName: this.clientName(),
      }),
    );
    if (result.health !== 'valid') {
      const expired = result.health === 'expired';
      throw new CliError({
        code: expired ? 'agent_token_expired' : 'agent_token_revoked',
        message: expired
          ? `the AGENT_TOKEN of ${result.name} expired at ${result.expires_at}`
          : `the hub refused the AGENT_TOKEN of ${result.name} before its expiry${result.hub_code ? ` (${result.hub_code})` : ''}`,
        fix: expired
          ? `svc stop ${result.name}, then svc start --name ${result.name} … (a refresh needs a valid token)`
          : `the agent was evicted or deleted at the hub: svc stop ${result.name}, then start it again`,
        exit: EXIT.authRequired,
        details: { ...result },
      });
    }
    for (const line of presentTokenHealth(result)) this.log(line);
    return result;
  }
}
