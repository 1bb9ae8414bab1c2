import type { HubDeps } from '../deps';
import { presentPeerMessage } from '../presenters/messages';
import { listAgentInbox } from '../use-cases/messages/list-agent-inbox';
import { listMyInbox } from '../use-cases/messages/list-my-inbox';
import { markMessageRead } from '../use-cases/messages/mark-message-read';
import { sendAgentMessage } from '../use-cases/messages/send-agent-message';
import type { HubHandlers } from './types';
import { actorOf, agentOf } from './types';

const DEFAULT_PAGE_SIZE = 50;

export function messageHandlers(
  deps: HubDeps,
): HubHandlers<'sendAgentMessage' | 'listMyInbox' | 'markInboxMessageRead' | 'listAgentInbox'> {
  return {
    async sendAgentMessage(ctx) {
      const message = await sendAgentMessage(deps, actorOf(ctx.actor), ctx.params.agentId, {
        kind: ctx.body.kind,
        body: ctx.body.body,
        correlationId: ctx.body.correlation_id,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentPeerMessage(message) } };
    },
    async listMyInbox(ctx) {
      const messages = await listMyInbox(deps, agentOf(ctx.actor), {
        unreadOnly: ctx.query.unread_only ?? false,
        limit: ctx.query.limit ?? DEFAULT_PAGE_SIZE,
        after: ctx.query.after,
      });
      return { status: 200, body: { data: messages.map(presentPeerMessage) } };
    },
    async markInboxMessageRead(ctx) {
      const message = await markMessageRead(deps, agentOf(ctx.actor), ctx.params.messageId);
      return { status: 200, body: { data: presentPeerMessage(message) } };
    },
    async listAgentInbox(ctx) {
      const messages = await listAgentInbox(deps, ctx.actor, ctx.params.agentId, {
        unreadOnly: ctx.query.unread_only ?? false,
        limit: ctx.query.limit ?? DEFAULT_PAGE_SIZE,
        after: ctx.query.after,
      });
      return { status: 200, body: { data: messages.map(presentPeerMessage) } };
    },
  };
}
