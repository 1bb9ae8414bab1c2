import type { Actor } from '@svc/auth';
import { findAgentFor } from '../../data/agents.lookups';
import { readInbox } from '../../data/messages.lookups';
import type { InboxQuery } from '../../data/messages.lookups';
import type { HubDeps } from '../../deps';
import type { Message } from '../../generated/prisma/client';

/**
 * An agent's inbox for operators (`svc internal inbox --name <agent>`): a participant of the agent's
 * workspace or a key of it. An agent of another workspace is not found. Reading marks nothing read.
 */
export async function listAgentInbox(
  deps: HubDeps,
  actor: Actor | undefined,
  agentId: string,
  query: InboxQuery,
): Promise<Message[]> {
  const agent = await findAgentFor(deps, actor, agentId);
  return readInbox(deps.db, agent.id, query);
}
