import type { Db } from '../db';
import type { Message } from '../generated/prisma/client';

export interface InboxQuery {
  unreadOnly: boolean;
  limit: number;
  /** Id of the last message of the previous page. */
  after?: string;
}

/** An agent's messages, oldest first (ids sort by creation time). */
export function readInbox(db: Db, agentId: string, query: InboxQuery): Promise<Message[]> {
  return db.message.findMany({
    where: {
      toAgentId: agentId,
      ...(query.unreadOnly ? { readAt: null } : {}),
      ...(query.after ? { id: { gt: query.after } } : {}),
    },
    orderBy: { id: 'asc' },
    take: query.limit,
  });
}
