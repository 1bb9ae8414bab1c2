import { createHubClient, unwrap } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
import type { Logger } from '@svc/service-kit';
import { describeError } from '../../domain/call-policy';

export type PeerMessage = HubApi.components['schemas']['PeerMessage'];

/** Replies start with this, so a reply that lands in an agent's inbox is never answered again. */
export const REPLY_PREFIX = 'ack: ';
/** How much of the ask a reply quotes. */
export const REPLY_QUOTE_CHARS = 200;

export interface InboxResponderOptions {
  /** The agent's `AGENT_TOKEN`; never logged. */
  token: string;
  hubUrl: string;
  /** The agent's own id (the token's subject). */
  agentId: string;
  logger: Logger;
  /** Pause between inbox polls (default 1 s). */
  pollMs?: number;
  fetch?: (input: Request) => Promise<Response>;
}

/** Where the reply to an ask goes and what it says; undefined when the message is not answered. */
export function replyFor(
  message: Pick<PeerMessage, 'kind' | 'body' | 'correlation_id' | 'from'>,
  selfId: string,
): { to: string; body: string; correlation_id: string } | undefined {
  if (message.kind !== 'ask' || !message.correlation_id) return undefined;
  if (message.body.startsWith(REPLY_PREFIX)) return undefined;
  if (message.from.kind === 'agent' && message.from.id === selfId) return undefined;
  // An agent gets the reply in its own inbox. A participant or key has no inbox: the reply goes to this
  // agent's own inbox (an agent may always message itself), where `svc ask` reads it by correlation id.
  const to = message.from.kind === 'agent' && message.from.id ? message.from.id : selfId;
  return {
    to,
    body: `${REPLY_PREFIX}${message.body.slice(0, REPLY_QUOTE_CHARS)}`,
    correlation_id: message.correlation_id,
  };
}

/**
 * Answers the agent's `ask` messages: polls `GET /api/v1/agents/me/inbox?unread_only=true`, replies to each
 * ask with an `ask` carrying the same `correlation_id` (body `ack: <first 200 characters>`), and marks every
 * message it has seen read. Replies (body starting with `ack: `) and the agent's own messages are marked read
 * and never answered, so two reference agents cannot answer each other forever. A failed poll or reply is
 * logged and retried on the next poll; an ask is answered at most once per process.
 */
export class InboxResponder {
  private readonly hub;
  private readonly answered = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly controller = new AbortController();

  constructor(private readonly options: InboxResponderOptions) {
    this.hub = createHubClient({
      baseUrl: options.hubUrl,
      token: options.token,
      clientName: '@svc/reference-agent',
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  start(): void {
    if (this.stopped || this.timer) return;
    const tick = () => {
      this.running = this.pollOnce()
        .then(() => undefined)
        .catch((error: unknown) => {
          if (!this.stopped) {
            this.options.logger.warn(
              { error: describeError(error, [this.options.token]) },
              'inbox poll failed',
            );
          }
        })
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, this.options.pollMs ?? 1_000);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.controller.abort(new Error('the agent is stopping'));
    await this.running;
  }

  /** One pass over the unread messages; returns how many asks were answered. */
  async pollOnce(): Promise<number> {
    const signal = this.controller.signal;
    const unread = unwrap(
      await this.hub.GET('/api/v1/agents/me/inbox', {
        params: { query: { unread_only: true, limit: 50 } },
        signal,
      }),
    );
    let replies = 0;
    for (const message of unread) {
      if (this.stopped) break;
      const reply = replyFor(message, this.options.agentId);
      if (reply && !this.answered.has(message.id)) {
        const sent = await this.hub.POST('/api/v1/agents/{agentId}/messages', {
          params: { path: { agentId: reply.to } },
          body: { kind: 'ask', body: reply.body, correlation_id: reply.correlation_id },
          signal,
        });
        if (sent.response.ok) {
          this.answered.add(message.id);
          replies += 1;
          this.options.logger.info(
            { message_id: message.id, correlation_id: reply.correlation_id, to: reply.to },
            'answered an ask',
          );
        } else if (sent.response.status >= 500) {
          continue; // retried on the next poll
        } else {
          // Refused for good (peer rule, evicted sender): do not try again.
          this.answered.add(message.id);
          this.options.logger.warn(
            { message_id: message.id, status: sent.response.status },
            'the reply to an ask was refused',
          );
        }
      }
      unwrap(
        await this.hub.POST('/api/v1/agents/me/inbox/{messageId}/read', {
          params: { path: { messageId: message.id } },
          signal,
        }),
      );
    }
    return replies;
  }
}
