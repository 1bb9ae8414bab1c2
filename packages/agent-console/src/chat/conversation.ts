import { randomUUID } from 'node:crypto';
import type { AgentConsoleApi } from '@svc/contracts';

export type ChatMessage = AgentConsoleApi.components['schemas']['ChatMessage'];
export type ChatAuthor = ChatMessage['author'];

export interface ConversationOptions {
  /** Messages kept; older ones are forgotten (default 1,000). */
  limit?: number;
  now?: () => Date;
}

type Listener = (message: ChatMessage) => void;

/**
 * The agent's conversation, in memory: messages numbered by `seq` (1, 2, …, never reused), the last `limit`
 * kept. Listeners hear every message appended after they subscribed.
 */
export class Conversation {
  private readonly messages: ChatMessage[] = [];
  private readonly listeners = new Set<Listener>();
  private lastSeq = 0;
  private readonly limit: number;
  private readonly now: () => Date;

  constructor(options: ConversationOptions = {}) {
    this.limit = Math.max(1, options.limit ?? 1_000);
    this.now = options.now ?? (() => new Date());
  }

  append(author: ChatAuthor, text: string, inReplyTo?: number): ChatMessage {
    this.lastSeq += 1;
    const message: ChatMessage = {
      seq: this.lastSeq,
      id: `msg_${randomUUID().replace(/-/g, '')}`,
      author: { kind: author.kind, id: author.id },
      in_reply_to: inReplyTo ?? null,
      text,
      created_at: this.now().toISOString(),
    };
    this.messages.push(message);
    if (this.messages.length > this.limit) this.messages.splice(0, this.messages.length - this.limit);
    for (const listener of [...this.listeners]) listener(message);
    return message;
  }

  /** Messages with `seq` greater than `after`, oldest first, at most `limit`. */
  after(after: number, limit = Number.POSITIVE_INFINITY): ChatMessage[] {
    const out: ChatMessage[] = [];
    for (const message of this.messages) {
      if (message.seq <= after) continue;
      out.push(message);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Calls `listener` for every message appended from now on; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Open subscriptions (streams), for tests and shutdown checks. */
  subscriberCount(): number {
    return this.listeners.size;
  }
}
