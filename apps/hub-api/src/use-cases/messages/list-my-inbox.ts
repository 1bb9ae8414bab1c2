import type { AgentActor } from '@svc/auth';
import { readInbox } from '../../data/messages.lookups';
import type { InboxQuery } from '../../data/messages.lookups';
import type { HubDeps } from '../../deps';
import type { Message } from '../../generated/prisma/client';

/** The calling agent's own inbox, oldest first. Reading marks nothing read. */
export function listMyInbox(deps: HubDeps, actor: AgentActor, query: InboxQuery): Promise<Message[]> {
  return readInbox(deps.db, actor.agentId, query);
}
