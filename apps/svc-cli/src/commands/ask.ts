import { Args, Flags } from '@oclif/core';
import { AgentHostCommand } from '../agent-host-command';
import { askLines } from '../presenters/agents';
import { askAgent } from '../use-cases/agents/ask-agent';
import type { AskAgentResult } from '../use-cases/agents/ask-agent';

export default class Ask extends AgentHostCommand<typeof Ask> {
  static override summary = 'Ask an agent something and wait for its answer.';

  static override description =
    'Sends a message of kind `ask` with a fresh correlation id and waits for the reply carrying it. With ' +
    '--from, the ask goes out as that agent (started on this host) and the peer rule applies: agents must share ' +
    'a team or an active project assignment (else exit 1, peer_message_forbidden). Without --from, the ' +
    'participant asks. Exit 5 when no answer comes within --timeout-seconds.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> reviewer "status?" --timeout-seconds 30',
    '<%= config.bin %> <%= command.id %> reviewer "please review #12" --from builder --json',
  ];

  static override args = {
    agent: Args.string({ description: 'Name of the agent to ask.', required: true }),
    message: Args.string({ description: 'The message (at most 16 KiB).', required: true }),
  };

  static override flags = {
    'timeout-seconds': Flags.integer({
      description: 'How long to wait for the answer (1-3600 s).',
      default: 60,
    }),
    from: Flags.string({
      description: 'Ask as this agent (started on this host) instead of as the participant.',
    }),
  };

  public async run(): Promise<AskAgentResult> {
    const asAgent = this.flags.from !== undefined;
    // A participant's ask is the participant's; an agent's ask needs only lookups (runtime key or participant).
    const { hub, profile } = asAgent
      ? await this.hostContext().then((c) => ({ hub: c.hub, profile: c.profile }))
      : await this.participantHub();
    const result = await askAgent({
      hub,
      hubUrl: profile.hub_url!,
      workspace: profile.workspace!,
      stateDir: await this.store().stateDir(),
      clientName: this.clientName(),
      target: this.args.agent,
      message: this.args.message,
      from: this.flags.from,
      timeoutSeconds: this.flags['timeout-seconds'],
      progress: this.spin,
    });
    for (const line of askLines(result)) this.log(line);
    return result;
  }
}
