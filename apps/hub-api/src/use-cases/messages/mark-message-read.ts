import type { AgentActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Message } from '../../generated/prisma/client';

/** Marks one of the calling agent's messages read; again is harmless and keeps the first read time. */
export async function markMessageRead(deps: HubDeps, actor: AgentActor, messageId: string): Promise<Message> {
  const where = { id: messageId, toAgentId: actor.agentId };
  await deps.db.message.updateMany({ where: { ...where, readAt: null }, data: { readAt: deps.now() } });
  const message = await deps.db.message.findFirst({ where });
  if (!message) {
    throw new AppError({
      status: 404,
      code: 'message_not_found',
      detail: `No message '${messageId}' in your inbox.`,
    });
  }
  return message;
}
