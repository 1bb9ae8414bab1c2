import { Flags } from '@oclif/core';
import { AgentHostCommand } from '../../agent-host-command';
import { inboxLines } from '../../presenters/agents';
import { listAgentInbox } from '../../use-cases/agents/list-agent-inbox';
import type { ListAgentInboxResult } from '../../use-cases/agents/list-agent-inbox';

export default class InternalInbox extends AgentHostCommand<typeof InternalInbox> {
  static override summary = "Show an agent's inbox (messages, oldest first).";

  static override description =
    'Reads the inbox with the runtime key (or the participant token) without marking anything read.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> --name reviewer',
    '<%= config.bin %> <%= command.id %> --name reviewer --unread-only --json',
  ];

  static override flags = {
    name: Flags.string({ description: 'Name of the agent.', required: true }),
    'unread-only': Flags.boolean({ description: 'Only messages not marked read yet.' }),
    limit: Flags.integer({
      description: 'Show the newest this many messages.',
      default: 50,
      min: 1,
      max: 10000,
    }),
  };

  public async run(): Promise<ListAgentInboxResult> {
    const context = await this.hostContext();
    const result = await listAgentInbox({
      hub: context.hub,
      hubUrl: context.hubUrl,
      workspace: context.workspace,
      name: this.flags.name,
      unreadOnly: this.flags['unread-only'],
      limit: this.flags.limit,
    });
    for (const line of inboxLines(result)) this.log(line);
    return result;
  }
}
