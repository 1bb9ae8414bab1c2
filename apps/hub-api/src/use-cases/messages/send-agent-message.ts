import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { actorIdentity } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Message } from '../../generated/prisma/client';
import { COLLABORATOR_ROLES } from '../../domain/roles';
import { agentEvicted, agentNotFound } from '../../data/agents.lookups';
import { agentsMayTalk } from '../../data/peer-messaging.policy';
import { assertResourceAccess } from '../../data/resources.access';

export type PeerMessageKind = 'ask' | 'nudge' | 'console';

/** Largest message body, in UTF-8 bytes. */
export const MAX_MESSAGE_BYTES = 16 * 1024;

/**
 * Delivers a message to an agent's inbox. Senders: the agent itself or a peer that shares a team or an
 * active project assignment with it (any other agent is refused, and the refusal is audited without the
 * body); a participant with a collaborator role in the target's workspace; a key of that workspace (the
 * router already checked `messages:write`). A target the sender cannot see is not found; an evicted one
 * receives nothing (409).
 */
export async function sendAgentMessage(
  deps: HubDeps,
  actor: Actor,
  targetAgentId: string,
  input: { kind: PeerMessageKind; body: string; correlationId?: string; requestId?: string },
): Promise<Message> {
  const bytes = Buffer.byteLength(input.body, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new AppError({
      status: 400,
      code: 'message_too_large',
      detail: `The message body is ${bytes} bytes; at most ${MAX_MESSAGE_BYTES} are accepted.`,
      extra: { limit_bytes: MAX_MESSAGE_BYTES },
    });
  }
  const target = await deps.db.agent.findUnique({
    where: { id: targetAgentId },
    select: { id: true, workspaceId: true, status: true },
  });
  if (!target) throw agentNotFound(targetAgentId);
  await assertResourceAccess(deps.db, actor, target.workspaceId, {
    notFound: () => agentNotFound(targetAgentId),
    roles: COLLABORATOR_ROLES,
  });
  if (
    actor.kind === 'agent' &&
    !(await agentsMayTalk(deps.db, target.workspaceId, actor.agentId, target.id))
  ) {
    await deps.audit.record({
      workspaceId: target.workspaceId,
      actor,
      action: 'message.denied',
      targetType: 'agent',
      targetId: target.id,
      data: { kind: input.kind, reason: 'no_shared_team_or_active_project' },
      requestId: input.requestId,
    });
    throw new AppError({
      status: 403,
      code: 'peer_message_forbidden',
      detail: `You share no team and no active project assignment with agent '${target.id}', so you cannot message it.`,
    });
  }
  if (target.status === 'evicted') throw agentEvicted(target.id, 'receive messages');

  const sender = actorIdentity(actor);
  return deps.db.$transaction(async (tx) => {
    const message = await tx.message.create({
      data: {
        id: newId('msg'),
        workspaceId: target.workspaceId,
        toAgentId: target.id,
        fromKind: sender.kind,
        fromId: sender.id,
        kind: input.kind,
        body: input.body,
        correlationId: input.correlationId ?? null,
        createdAt: deps.now(),
      },
    });
    await deps.audit.record(
      {
        workspaceId: target.workspaceId,
        actor,
        action: 'message.sent',
        targetType: 'agent',
        targetId: target.id,
        data: { message_id: message.id, kind: message.kind, correlation_id: message.correlationId },
        requestId: input.requestId,
      },
      tx,
    );
    return message;
  });
}
