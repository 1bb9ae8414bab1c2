import type { Actor } from '@svc/auth';
import type { HubDeps } from '../deps';
import type { Message } from '../generated/prisma/client';
import { findAgentFor } from './find-agent';

export interface InboxQuery {
  unreadOnly: boolean;
  limit: number;
  /** Id of the last message of the previous page. */
  after?: string;
}

/** An agent's messages, oldest first (ids sort by creation time). */
export function readInbox(deps: HubDeps, agentId: string, query: InboxQuery): Promise<Message[]> {
  return deps.db.message.findMany({
    where: {
      toAgentId: agentId,
      ...(query.unreadOnly ? { readAt: null } : {}),
      ...(query.after ? { id: { gt: query.after } } : {}),
    },
    orderBy: { id: 'asc' },
    take: query.limit,
  });
}

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
  return readInbox(deps, agent.id, query);
}
