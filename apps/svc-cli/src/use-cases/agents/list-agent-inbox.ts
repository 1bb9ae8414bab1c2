import { readInboxFrom } from '../../data/agent-inbox';
import type { PeerMessage } from '../../data/agent-inbox';
import { findAgentByName } from '../../data/host-agents';
import { CliError, usageError } from '../../domain/cli-error';
import { checkAgentName } from '../../domain/direct-start-rules';
import type { HostContext } from './host-context';

export interface ListAgentInboxResult {
  agent_id: string;
  name: string;
  /** Messages, oldest first (the newest `limit` of them). */
  messages: PeerMessage[];
  total: number;
  unread: number;
}

/**
 * `svc internal inbox --name <agent>`: the agent's inbox as an operator reads it (participant or runtime key).
 * Reading does not mark anything read.
 */
export async function listAgentInbox(
  input: Omit<HostContext, 'profile' | 'stateDir'> & { name: string; unreadOnly: boolean; limit: number },
): Promise<ListAgentInboxResult> {
  const name = checkAgentName(input.name);
  if (input.limit < 1) throw usageError('limit_invalid', '--limit must be at least 1', 'pass --limit <n>');
  const agent = await findAgentByName(input.hub, input.workspace, name);
  if (!agent) {
    throw new CliError({
      code: 'agent_not_found',
      message: `no agent named "${name}" in workspace ${input.workspace}`,
      fix: 'check the name with `svc list`',
    });
  }
  const all = await readInboxFrom(
    { kind: 'operator', hub: input.hub, agentId: agent.id },
    undefined,
    input.unreadOnly,
  );
  return {
    agent_id: agent.id,
    name,
    messages: all.slice(-input.limit),
    total: all.length,
    unread: all.filter((m) => m.read_at === null).length,
  };
}
