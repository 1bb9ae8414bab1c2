import type { Actor } from '@svc/auth';
import type { AgentConsoleApi } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { OperationHandlers } from '@svc/service-kit';
import type { Chat } from '../chat/chat';
import type { ChatAuthor } from '../chat/conversation';
import { streamConversation, streamStart } from '../chat/stream';

type Health = AgentConsoleApi.components['schemas']['AgentConsoleHealth'];

export interface ConsoleRouteDeps {
  agentId: string;
  agentName: string;
  status: () => Health['status'];
  startedAt: Date;
  now: () => Date;
  chat: Chat;
  streamPingMs: number;
  /** Aborted at shutdown: open streams end. */
  stop: AbortSignal;
}

function authorOf(actor: Actor | undefined): ChatAuthor {
  if (actor?.kind === 'participant') return { kind: 'participant', id: actor.participantId };
  if (actor?.kind === 'agent') return { kind: 'agent', id: actor.agentId };
  // The router admits participants and agents only; anything else is a wiring mistake.
  throw new Error(`chat author of kind ${actor?.kind ?? 'anonymous'}`);
}

/** The console's operations, keyed by operationId. */
export function consoleHandlers(deps: ConsoleRouteDeps): OperationHandlers<AgentConsoleApi.operations> {
  return {
    getAgentConsoleHealth: () => {
      const uptimeMs = Math.max(0, deps.now().getTime() - deps.startedAt.getTime());
      return {
        status: 200,
        body: {
          agent_id: deps.agentId,
          name: deps.agentName,
          status: deps.status(),
          started_at: deps.startedAt.toISOString(),
          uptime_seconds: Math.round(uptimeMs / 100) / 10,
        },
      };
    },

    listAgentChatMessages: ({ query }) => {
      const after = query.after ?? 0;
      const data = deps.chat.conversation.after(after, query.limit ?? 100);
      return { status: 200, body: { data, next_after: data.at(-1)?.seq ?? after } };
    },

    sendAgentChatMessage: ({ actor, body }) => {
      const message = deps.chat.send(authorOf(actor), body.text);
      return { status: 202, body: { data: message } };
    },

    streamAgentChatMessages: async ({ req, res, query }) => {
      await streamConversation(req, res, {
        conversation: deps.chat.conversation,
        after: streamStart(req, query.after ?? 0),
        pingMs: deps.streamPingMs,
        stop: deps.stop,
      });
      // The stream has been written and ended above; the router's own `end()` finds nothing left to send.
      return { status: 200 } as never;
    },

    openAgentTerminal: () => {
      throw new AppError({
        status: 426,
        code: 'upgrade_required',
        detail: 'Open the terminal as a WebSocket (Upgrade: websocket).',
        headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
      });
    },
  };
}
