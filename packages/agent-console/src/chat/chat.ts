import type { Logger } from '@svc/service-kit';
import type { Conversation } from './conversation';
import type { ChatAuthor, ChatMessage } from './conversation';

/** Answers one chat message; resolves the reply text. */
export type ChatHandler = (text: string, author: ChatAuthor) => Promise<string>;

/** The reply stored when the handler fails (its error is logged, never shown). */
export const CHAT_FAILURE_REPLY = 'Sorry, I could not answer that message.';

/**
 * The agent's chat: a message is stored at once; the handler's reply is appended when it resolves, with
 * `in_reply_to` naming the message it answers.
 */
export class Chat {
  /** Replies still being worked out, so shutdown can wait for them. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    readonly conversation: Conversation,
    private readonly agentId: string,
    private readonly handler: ChatHandler,
    private readonly logger: Logger,
  ) {}

  send(author: ChatAuthor, text: string): ChatMessage {
    const message = this.conversation.append(author, text);
    const reply = this.reply(message).finally(() => this.pending.delete(reply));
    this.pending.add(reply);
    return message;
  }

  /** Resolves once every reply started so far is appended. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private async reply(message: ChatMessage): Promise<void> {
    let text: string;
    try {
      text = await this.handler(message.text, message.author);
    } catch (error) {
      this.logger.warn({ err: error, seq: message.seq }, 'chat handler failed');
      text = CHAT_FAILURE_REPLY;
    }
    this.conversation.append({ kind: 'agent', id: this.agentId }, text, message.seq);
  }
}
