import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { AgentPath } from '../domain/route-table';
import { FrontRequest, FrontResponse } from './front-exchange';
import type { ExchangeOwner } from './front-exchange';
import type { HttpParser, HttpParserClass, OnHeadersComplete } from './http-parser';
import { clientErrorAnswer } from './problem-answer';

/** What a client connection needs from the front that accepted it (`ConsoleFront`). */
export interface FrontContext {
  readonly Parser: HttpParserClass;
  readonly methods: readonly string[];
  readonly maxHeaderSize: number;
  /** The agent route a request target names (the front answers it itself); others go to `node:http`. */
  route(url: string): AgentPath | undefined;
  /** Answers a request the front took, with its route parsed once (the code `node:http`'s requests go to). */
  handle(req: FrontRequest, res: FrontResponse, path: AgentPath): void;
  /** Gives the connection, with the bytes not parsed yet put back in front, to `node:http`. */
  handOff(socket: Socket): void;
  forget(connection: FrontConnection): void;
  /** An exception while answering (the connection was closed). */
  failed(error: unknown): void;
  date(): string;
  readonly keepAliveTail: string;
}

/** The most a connection keeps of what it read while a request waits (reading is paused meanwhile). */
const MAX_STASH = 1 << 20;

/**
 * The request's headers by lower-cased name, or undefined when the request is not the front's to answer and goes
 * to `node:http` as it is.
 */
function headersOf(raw: string[]): IncomingHttpHeaders | undefined {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    // A repeated header (two Hosts, two Authorizations): node:http's own rules decide what it means. A name an
    // object cannot hold as its own plain property goes there too.
    if (Object.hasOwn(headers, name) || name === '__proto__') return undefined;
    headers[name] = raw[i + 1]!;
  }
  // A body announced with `Expect: 100-continue` waits for an interim answer node:http sends.
  return headers.expect === undefined ? headers : undefined;
}

/**
 * One client connection read by the router's own reader (decision 65): Node's HTTP parser (llhttp, strict, with
 * `node:http`'s header size limit) on the socket's data, and for each HTTP/1.1 request to an agent route a
 * `FrontRequest` and `FrontResponse` handed to the agent proxy. One exchange at a time, in order:
 *
 * - A request that arrives while the previous one is still in progress (pipelining) is not read past its head:
 *   the parser stops there (`2` from the head callback), the head is kept as text with the bytes after it,
 *   reading pauses, and the kept bytes are parsed again when the connection is free.
 * - Anything else — the router's own operations, upgrades, HTTP/1.0, `Expect`, repeated header names — goes to
 *   `node:http` once the connection is free: the kept bytes are put back on the socket (`unshift`) and the
 *   socket is handed over (`connection` of the `http.Server`), which then serves it to the end.
 * - A malformed request gets `400` (`431` for a head over the limit) and the connection closes; the front's
 *   sweeper answers `408` to heads slower than the headers timeout and to requests slower than the request
 *   timeout (unless an answer has begun), and closes connections idle past the keep-alive time.
 */
export class FrontConnection implements ExchangeOwner {
  private readonly parser: HttpParser;
  private req: FrontRequest | undefined;
  private res: FrontResponse | undefined;
  private requestDone = false;
  private answerDone = false;
  private closeAfter = false;
  /** A request the parser stopped at: its head as text, then everything read after it. */
  private stash: Buffer | undefined;
  private stopped: string | undefined;
  private handOver = false;
  private executing = false;
  private paused = false;
  private partialHeaders: string[] | undefined;
  private partialUrl = '';
  private gone = false;
  /** When the head in progress began, when the request being received began (0: none), when it became free. */
  headStartedAt = 0;
  requestStartedAt = 0;
  idleSince = Date.now();

  constructor(
    readonly socket: Socket,
    private readonly front: FrontContext,
  ) {
    const { Parser } = front;
    const parser = new Parser();
    parser.initialize(Parser.REQUEST, {}, front.maxHeaderSize, Parser.kLenientNone);
    parser[Parser.kOnMessageBegin] = this.onMessageBegin;
    parser[Parser.kOnHeaders] = this.onHeaders;
    parser[Parser.kOnHeadersComplete] = this.onHeadersComplete;
    parser[Parser.kOnBody] = this.onBody;
    parser[Parser.kOnMessageComplete] = this.onMessageComplete;
    this.parser = parser;
    socket.setNoDelay(true);
    socket.on('data', this.onData);
    socket.on('drain', this.onDrain);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
  }

  /** Whether an exchange is in progress (never closed as idle). */
  get busy(): boolean {
    return this.req !== undefined;
  }

  // ExchangeOwner: what the current request and answer use.
  pauseReading(): void {
    if (this.paused || this.gone) return;
    this.paused = true;
    this.socket.pause();
  }

  resumeReading(): void {
    if (!this.paused || this.gone || this.stash) return;
    this.paused = false;
    this.socket.resume();
  }

  send(data: Buffer | string, encoding?: BufferEncoding): boolean {
    return encoding ? this.socket.write(data, encoding) : this.socket.write(data);
  }

  cork(): void {
    this.socket.cork();
  }

  uncork(): void {
    this.socket.uncork();
  }

  date(): string {
    return this.front.date();
  }

  get keepAliveTail(): string {
    return this.front.keepAliveTail;
  }

  answered(close: boolean): void {
    this.answerDone = true;
    if (close) this.closeAfter = true;
    if (!this.requestDone) this.req?.discard();
    this.next();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Ends the connection: at once when it is free, else after the answer in progress (shutdown). */
  close(): void {
    if (!this.req) {
      this.socket.destroy();
      return;
    }
    this.closeAfter = true;
  }

  private readonly onData = (data: Buffer) => {
    // Ending (an answer with `Connection: close`, a malformed request): what else comes is not read.
    if (this.gone) return;
    if (this.stash) {
      // Read while a stopped request waits (reading pauses, but one read may be under way): kept in order.
      this.stash = Buffer.concat([this.stash, data]);
      if (this.stash.length > MAX_STASH) this.socket.destroy();
      return;
    }
    this.execute(data);
  };

  private execute(data: Buffer): void {
    this.executing = true;
    let parsed: number | Error;
    try {
      parsed = this.parser.execute(data);
    } catch (error) {
      // A fault of the router's own while answering: this connection ends, the router goes on.
      this.executing = false;
      this.gone = true;
      this.socket.destroy();
      this.front.failed(error);
      return;
    }
    this.executing = false;
    // Not `instanceof Error`: the parser's errors come from Node's own realm.
    if (typeof parsed !== 'number') {
      this.malformed((parsed as NodeJS.ErrnoException).code);
      return;
    }
    if (this.stopped !== undefined) {
      const rest = data.subarray(parsed);
      this.stash = Buffer.concat([Buffer.from(this.stopped, 'latin1'), rest]);
      this.stopped = undefined;
      // The parser ended in the stopped request's "upgrade": start it afresh for the kept bytes.
      this.parser.initialize(
        this.front.Parser.REQUEST,
        {},
        this.front.maxHeaderSize,
        this.front.Parser.kLenientNone,
      );
      if (!this.paused) {
        this.paused = true;
        this.socket.pause();
      }
    }
    this.next();
  }

  /** The exchange in progress is over both ways: on to what waits (more requests, or `node:http`). */
  private next(): void {
    if (this.executing || this.gone) return;
    // An answer that closes the connection does not wait for the rest of the request's body.
    if (this.req && !(this.answerDone && (this.requestDone || this.closeAfter))) return;
    if (this.req) this.finishExchange();
    if (this.closeAfter) {
      this.endConnection();
      return;
    }
    if (this.handOver) {
      this.handOff();
      return;
    }
    const stash = this.stash;
    if (!stash) return;
    this.stash = undefined;
    this.paused = false;
    this.socket.resume();
    this.execute(stash);
  }

  private endConnection(): void {
    this.gone = true;
    this.socket.end();
    this.socket.once('finish', () => this.socket.destroy());
  }

  private finishExchange(): void {
    this.req = undefined;
    this.res = undefined;
    this.requestStartedAt = 0;
    this.idleSince = Date.now();
  }

  private handOff(): void {
    this.gone = true;
    this.front.forget(this);
    this.socket.removeListener('data', this.onData);
    this.socket.removeListener('drain', this.onDrain);
    this.socket.removeListener('end', this.onEnd);
    this.socket.removeListener('error', this.onError);
    this.socket.removeListener('close', this.onClose);
    this.parser.close();
    if (this.stash) this.socket.unshift(this.stash);
    this.stash = undefined;
    this.front.handOff(this.socket);
    this.socket.resume();
  }

  private readonly onMessageBegin = () => {
    this.headStartedAt = Date.now();
    return 0;
  };

  private readonly onHeaders = (headers: string[], url: string) => {
    this.partialHeaders = this.partialHeaders ? this.partialHeaders.concat(headers) : headers;
    this.partialUrl += url;
  };

  private readonly onHeadersComplete: OnHeadersComplete = (
    major,
    minor,
    parsedHeaders,
    methodIndex,
    parsedUrl,
    _status,
    _statusMessage,
    upgrade,
    keepAlive,
  ) => {
    const raw = parsedHeaders ?? this.partialHeaders ?? [];
    const url = this.partialUrl + (parsedUrl ?? '');
    this.partialHeaders = undefined;
    this.partialUrl = '';
    this.headStartedAt = 0;
    const method = this.front.methods[methodIndex ?? -1] ?? 'GET';
    const path =
      major === 1 && minor === 1 && !upgrade && method !== 'CONNECT' ? this.front.route(url) : undefined;
    const headers = path ? headersOf(raw) : undefined;
    if (headers === undefined) this.handOver = true;
    if (
      headers === undefined ||
      path === undefined ||
      this.stash ||
      this.closeAfter ||
      (this.req && !(this.requestDone && this.answerDone))
    ) {
      // Not now, or not here: stop at this head and keep it as text (the parser checked every byte of it).
      let head = `${method} ${url} HTTP/${major}.${minor}\r\n`;
      for (let i = 0; i < raw.length; i += 2) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
      this.stopped = `${head}\r\n`;
      return 2;
    }
    if (this.req) this.finishExchange();
    const req = new FrontRequest(method, url, headers, raw, this);
    const res = new FrontResponse(this, keepAlive, method);
    this.req = req;
    this.res = res;
    this.requestDone = false;
    this.answerDone = false;
    this.requestStartedAt = Date.now();
    this.front.handle(req, res, path);
    return 0;
  };

  private readonly onBody = (chunk: Buffer) => {
    this.req?.push(chunk);
  };

  private readonly onMessageComplete = () => {
    // The stopped request's "upgrade" completes here too; it is parsed again later.
    if (this.stopped !== undefined) return;
    this.requestDone = true;
    this.requestStartedAt = 0;
    this.req?.finish();
    this.next();
  };

  /**
   * A head or request slower than the server's headers or request timeout (the front's sweeper): `408`, as
   * `node:http` answers, unless an answer has begun; the connection closes either way.
   */
  timedOut(): void {
    if (!this.gone) this.malformed('ERR_HTTP_REQUEST_TIMEOUT');
  }

  private malformed(code: string | undefined): void {
    this.gone = true;
    if (this.res && this.res.headersSent) {
      this.socket.destroy();
      return;
    }
    // An exchange in progress (a request body too slow) is over: what its answer would write is dropped.
    const res = this.res;
    this.req = undefined;
    this.res = undefined;
    this.socket.end(clientErrorAnswer(code));
    setTimeout(() => this.socket.destroy(), 1_000).unref();
    res?.aborted();
  }

  private readonly onDrain = () => {
    this.res?.emit('drain');
  };

  /**
   * The client closed its side: as `node:http` does by default, an exchange in progress (or a request kept for
   * later) is abandoned, so the agent's side is closed too; an idle connection just ends.
   */
  private readonly onEnd = () => {
    if (this.req || this.stash) this.socket.destroy();
    else this.endConnection();
  };

  private readonly onError = () => {
    // A client that reset the connection: `close` follows and ends the exchange.
  };

  private readonly onClose = () => {
    this.gone = true;
    this.front.forget(this);
    const res = this.res;
    this.req = undefined;
    this.res = undefined;
    if (res && !res.writableFinished) res.aborted();
    this.parser.close();
  };
}
