import type { Request, Response } from 'express';
import type { Conversation } from './conversation';
import type { ChatMessage } from './conversation';

/** Comment line period, so proxies and browsers keep an idle stream open. */
export const DEFAULT_STREAM_PING_MS = 15_000;

/** The `after` a stream starts from: `Last-Event-ID` (a reconnecting EventSource) wins over `?after=`. */
export function streamStart(req: Request, after: number): number {
  const last = req.header('last-event-id');
  return last !== undefined && /^\d{1,15}$/.test(last.trim()) ? Number(last.trim()) : after;
}

/**
 * Streams the conversation as server-sent events: every kept message after `after`, then each new one as it
 * is appended (event `message`, id = seq, data = the message as JSON), with a comment line every `pingMs`.
 * Resolves when the client goes away or `stop` is aborted; the subscription and timer are gone by then.
 */
export function streamConversation(
  req: Request,
  res: Response,
  options: { conversation: Conversation; after: number; pingMs: number; stop: AbortSignal },
): Promise<void> {
  const { conversation, pingMs, stop } = options;
  res.status(200);
  res.set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  let sent = options.after;
  const write = (message: ChatMessage) => {
    if (message.seq <= sent) return;
    sent = message.seq;
    res.write(`id: ${message.seq}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`);
  };
  // Subscribe before reading the backlog, so nothing appended in between is missed (`sent` drops repeats).
  const unsubscribe = conversation.subscribe(write);
  res.write('retry: 2000\n\n');
  for (const message of conversation.after(sent)) write(message);
  const ping = setInterval(() => res.write(': ping\n\n'), pingMs);

  return new Promise<void>((resolve) => {
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      clearInterval(ping);
      unsubscribe();
      stop.removeEventListener('abort', end);
      if (!res.writableEnded) res.end();
      resolve();
    };
    // The response closes when the client goes away (the request's own 'close' only means its body was read).
    res.on('close', end);
    res.on('error', end);
    if (stop.aborted) end();
    else stop.addEventListener('abort', end);
  });
}
