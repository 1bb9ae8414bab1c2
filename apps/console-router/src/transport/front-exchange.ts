import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ClientRequest, ClientResponse } from './client-exchange';

/** What an exchange needs from the client connection that read it (`FrontConnection`). */
export interface ExchangeOwner {
  /** Stop or restart reading the client's socket (back-pressure, a body nobody reads yet). */
  pauseReading(): void;
  resumeReading(): void;
  /** Writes to the client's socket: `false` when its buffer is full (`drain` follows). */
  send(data: Buffer | string, encoding?: BufferEncoding): boolean;
  cork(): void;
  uncork(): void;
  /** The answer was written in full; `close`: the connection ends after it. */
  answered(close: boolean): void;
  /** Ends the connection at once (an answer that cannot be completed). */
  destroy(): void;
  /** The current `Date` header value (the owner caches it per second). */
  date(): string;
  /** The end of a head that keeps the connection open: `Connection` and `Keep-Alive` with the server's timeout. */
  readonly keepAliveTail: string;
}

/**
 * A request read by the router's own reader (decision 65): method, target and headers as `node:http` would give
 * them (names lower-cased; the reader takes only requests without repeated header names), the body as `data`
 * events. Chunks nobody listens to yet, or that arrive while paused, are held and the socket stops reading, so
 * a body waiting for an asynchronous admission costs at most one read.
 */
export class FrontRequest extends EventEmitter implements ClientRequest {
  complete = false;
  private held: Buffer[] | undefined;
  private paused = false;
  private endHeld = false;
  /** The answer is complete: the rest of the body is read and dropped. */
  private discarding = false;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    readonly rawHeaders: string[],
    private readonly owner: ExchangeOwner,
  ) {
    super();
  }

  override on(event: string | symbol, listener: Parameters<EventEmitter['on']>[1]): this {
    super.on(event, listener);
    if (event === 'data' && (this.held || this.endHeld) && !this.paused) queueMicrotask(() => this.flush());
    return this;
  }

  /** A body chunk from the reader. */
  push(chunk: Buffer): void {
    if (this.discarding) return;
    if (this.paused || this.held || this.listenerCount('data') === 0) {
      (this.held ??= []).push(chunk);
      this.owner.pauseReading();
      return;
    }
    this.emit('data', chunk);
  }

  /** The body is complete. */
  finish(): void {
    this.complete = true;
    if (this.discarding) return;
    if (this.held || this.paused || this.listenerCount('end') === 0) this.endHeld = true;
    else this.emit('end');
  }

  /** Nobody will read the body any more (the answer is complete): what comes is dropped. */
  discard(): void {
    this.discarding = true;
    this.held = undefined;
    this.endHeld = false;
    this.paused = false;
    this.owner.resumeReading();
  }

  pause(): this {
    this.paused = true;
    this.owner.pauseReading();
    return this;
  }

  resume(): this {
    this.paused = false;
    this.flush();
    return this;
  }

  private flush(): void {
    while (this.held && !this.paused && !this.discarding) {
      if (this.listenerCount('data') === 0) return;
      const chunk = this.held.shift()!;
      if (this.held.length === 0) this.held = undefined;
      this.emit('data', chunk);
    }
    if (this.paused || this.held || this.discarding) return;
    if (this.endHeld && this.listenerCount('end') > 0) {
      this.endHeld = false;
      this.emit('end');
    }
    this.owner.resumeReading();
  }
}

/** Characters `node:http` refuses in a header value, and what a header name may be (RFC 9110 token). */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
/** An answer whose body is at most this big goes out with its head in one buffer. */
const ONE_WRITE_MAX = 16 * 1024;
/** The end of a head that keeps the connection open, as `node:http` writes it for an idle timeout (0: none). */
export function keepAliveTail(keepAliveMs: number): string {
  const timeout = keepAliveMs > 0 ? `Keep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n` : '';
  return `Connection: keep-alive\r\n${timeout}\r\n`;
}

/**
 * An answer's head as text: each header checked as `node:http` checks it, the framing headers left out (the
 * answer frames its body itself), and what framing and `Date` need noted on the way.
 */
class HeadWriter {
  length = false;
  date = false;
  close = false;

  constructor(public text: string) {}

  addPairs(pairs: readonly string[]): void {
    for (let i = 0; i < pairs.length; i += 2) this.add(pairs[i]!, pairs[i + 1]!);
  }

  add(name: string, value: string): void {
    if (!TOKEN.test(name) || INVALID_VALUE.test(value)) throw new TypeError(`header ${name} cannot be sent`);
    // Compared by length first: nearly every header is none of these, and lower-casing costs an allocation.
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'date') this.date = true;
        break;
      case 10:
        if (name.toLowerCase() === 'connection') {
          if (/\bclose\b/i.test(value)) this.close = true;
          return;
        }
        if (name.toLowerCase() === 'keep-alive') return;
        break;
      case 14:
        if (name.toLowerCase() === 'content-length') this.length = true;
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') return;
        break;
    }
    this.text += `${name}: ${value}\r\n`;
  }
}

/**
 * The answer to a `FrontRequest`, written as HTTP/1.1 straight to the client's socket: the status line and the
 * headers the router or the agent gave, `Date` when the agent sent none, `Connection`, and the body framed by its
 * `Content-Length` or, without one, chunked. A head and a small body go out in one write (`end(chunk)`).
 */
export class FrontResponse extends EventEmitter implements ClientResponse {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  private added: string[] | undefined;
  private head = '';
  private chunked = false;
  private bodyless = false;
  private close: boolean;

  constructor(
    private readonly owner: ExchangeOwner,
    /** The client asked to keep the connection open (HTTP/1.1 without `Connection: close`). */
    keepAlive: boolean,
    private readonly method: string,
  ) {
    super();
    this.close = !keepAlive;
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.headersSent) throw new Error('the headers were sent already');
    const values = Array.isArray(value) ? value : [String(value)];
    for (const one of values) (this.added ??= []).push(name, String(one));
    return this;
  }

  writeHead(status: number, headers?: OutgoingHttpHeaders | string[]): this {
    if (this.headersSent) throw new Error('the headers were sent already');
    if (!Number.isInteger(status) || status < 100 || status > 999)
      throw new RangeError(`bad status ${status}`);
    const head = new HeadWriter(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`);
    if (this.added) head.addPairs(this.added);
    if (Array.isArray(headers)) head.addPairs(headers);
    else if (headers) {
      for (const name in headers) {
        const value = headers[name];
        if (value === undefined) continue;
        if (Array.isArray(value)) for (const one of value) head.add(name, String(one));
        else head.add(name, String(value));
      }
    }
    if (head.close) this.close = true;
    this.bodyless = this.method === 'HEAD' || status === 204 || status === 304 || status < 200;
    let text = head.text;
    if (!head.length && !this.bodyless) {
      this.chunked = true;
      text += 'Transfer-Encoding: chunked\r\n';
    }
    if (!head.date) text += `Date: ${this.owner.date()}\r\n`;
    text += this.close ? 'Connection: close\r\n\r\n' : this.owner.keepAliveTail;
    this.head = text;
    this.statusCode = status;
    this.headersSent = true;
    return this;
  }

  write(chunk: Buffer | string): boolean {
    if (this.destroyed || this.writableEnded) return false;
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.owner.cork();
    const headFlushed = this.sendHead();
    const flushed = this.sendChunk(chunk) && headFlushed;
    this.owner.uncork();
    return flushed;
  }

  end(chunk?: Buffer | string): this {
    if (this.destroyed || this.writableEnded) return this;
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.writableEnded = true;
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.head !== '' && !this.chunked && (this.bodyless || !data || data.length <= ONE_WRITE_MAX)) {
      // The whole answer at once (nearly every answer): one buffer, one write.
      this.owner.send(this.whole(data));
    } else {
      this.owner.cork();
      this.sendHead();
      if (data !== undefined) this.sendChunk(data);
      if (this.chunked && !this.bodyless) this.owner.send('0\r\n\r\n', 'latin1');
      this.owner.uncork();
    }
    this.writableFinished = true;
    this.emit('finish');
    this.emit('close');
    this.owner.answered(this.close);
    return this;
  }

  /** The client went away, or the answer broke off: the connection ends. */
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.owner.destroy();
    return this;
  }

  /** The client's connection closed before the answer was complete. */
  aborted(): void {
    this.destroyed = true;
    this.emit('close');
  }

  /** The head and a body in one buffer (the body copied: a chunk read off the agent's socket is not kept). */
  private whole(data: Buffer | undefined): Buffer {
    const head = this.head;
    this.head = '';
    const body = this.bodyless || !data ? 0 : data.length;
    const buffer = Buffer.allocUnsafe(head.length + body);
    buffer.write(head, 0, 'latin1');
    if (body > 0) data!.copy(buffer, head.length);
    return buffer;
  }

  private sendHead(): boolean {
    if (this.head === '') return true;
    const head = this.head;
    this.head = '';
    return this.owner.send(head, 'latin1');
  }

  private sendChunk(chunk: Buffer | string): boolean {
    if (this.bodyless) return true;
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (data.length === 0) return true;
    if (!this.chunked) return this.owner.send(data);
    this.owner.send(`${data.length.toString(16)}\r\n`, 'latin1');
    this.owner.send(data);
    return this.owner.send('\r\n', 'latin1');
  }
}
