import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { routerJson } from './router-fetch';
import type { TicketSource } from './tickets';
import type { ChatMessage, SendChatMessageRequest } from './types';

type ChatPage = { data: ChatMessage[]; next_after: number };

const POLL_MS = 1500;

/**
 * The agent's chat through the console router: the conversation is read incrementally
 * (`GET /chat/messages?after=`) every 1.5 s while the panel is open, and a message is sent with
 * `POST /chat/messages`; the agent's reply arrives as a later message.
 */
export function ChatPanel({ consoleUrl, tickets }: { consoleUrl: string; tickets: TicketSource }) {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [readError, setReadError] = useState<unknown>(undefined);
  const [sendError, setSendError] = useState<unknown>(undefined);
  const after = useRef(0);
  const inputId = useId();
  const logEnd = useRef<HTMLLIElement>(null);

  const merge = (incoming: ChatMessage[]) => {
    if (incoming.length === 0) return;
    setMessages((current) => {
      const bySeq = new Map(current.map((m) => [m.seq, m]));
      for (const m of incoming) bySeq.set(m.seq, m);
      return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
    });
    after.current = Math.max(after.current, ...incoming.map((m) => m.seq));
  };

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    after.current = 0;
    setMessages([]);
    const poll = async () => {
      try {
        const page = await routerJson<ChatPage>(consoleUrl, tickets, '/chat/messages', {
          query: { after: after.current, limit: 200 },
          signal: controller.signal,
        });
        if (controller.signal.aborted) return;
        merge(page.data);
        setReadError(undefined);
      } catch (error) {
        if (!controller.signal.aborted) setReadError(error);
      }
      if (!controller.signal.aborted) timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [consoleUrl, tickets]);

  useEffect(() => {
    logEnd.current?.scrollIntoView({ block: 'nearest' });
  }, [messages.length]);

  const send = async (event: FormEvent) => {
    event.preventDefault();
    const body: SendChatMessageRequest = { text: text.trim() };
    if (!body.text) return;
    setSending(true);
    setSendError(undefined);
    try {
      const stored = await routerJson<{ data: ChatMessage }>(consoleUrl, tickets, '/chat/messages', {
        method: 'POST',
        body,
      });
      merge([stored.data]);
      setText('');
    } catch (error) {
      setSendError(error);
    } finally {
      setSending(false);
    }
  };

  return (
    <section aria-labelledby="chat-title" className="console-panel">
      <h3 id="chat-title">Chat</h3>
      {/* A scrolling list: focusable, so the keyboard can scroll back through the conversation. */}
      <ol className="chat-log" aria-live="polite" aria-label="Conversation" tabIndex={0}>
        {messages.length === 0 && <li className="muted">No messages yet.</li>}
        {messages.map((m) => (
          <li key={m.seq} className={`chat-message chat-${m.author.kind}`}>
            <span className="chat-author">{m.author.kind === 'agent' ? 'Agent' : 'You'}</span>
            <span className="chat-text">{m.text}</span>
          </li>
        ))}
        <li ref={logEnd} aria-hidden="true" className="chat-end" />
      </ol>
      <ProblemMessage error={readError} context="The conversation could not be read" />
      <form className="chat-form" onSubmit={(e) => void send(e)}>
        <label htmlFor={inputId}>Message</label>
        <input
          id={inputId}
          value={text}
          maxLength={8000}
          onChange={(e) => setText(e.target.value)}
          autoComplete="off"
        />
        <button type="submit" className="button-primary" disabled={sending || !text.trim()}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </form>
      <ProblemMessage error={sendError} context="The message was not sent" />
    </section>
  );
}
