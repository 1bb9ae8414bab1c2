import net from 'node:net';
import type { Socket } from 'node:net';
import { HOP_BY_HOP_HEADERS, connectionNominated } from '@svc/service-kit/http';
import type { ClientRequest, ClientResponse } from './client-exchange';
import type { OnHeadersComplete, HttpParser, HttpParserClass } from './http-parser';

/** What one forwarded request needs from the caller: where it goes and the headers the router adds. */
export interface ForwardTarget {
  agentId: string;
  servePort: number;
  /** Path and query the agent receives. */
  path: string;
  caller: string;
  proxyKey: string;
  requestId: string;
}

/** What a connection needs from its pool (`AgentHttpForwarder`). */
export interface ConnectionPool {
  readonly Parser: HttpParserClass;
  readonly options: Pick<AgentHttpForwarderOptions, 'onAnswer' | 'onFailed'>;
  /** Sends a request again, on a new connection. */
  forward(req: ClientRequest, res: ClientResponse, target: ForwardTarget, fresh: boolean): void;
  release(connection: AgentConnection): void;
  forget(connection: AgentConnection): void;
}

export interface AgentHttpForwarderOptions {
  Parser: HttpParserClass;
  /** The agent's answer has begun (its status), before any of it is written to the client. */
  onAnswer: (status: number, target: ForwardTarget) => void;
  /** The agent could not be reached or broke the exchange (`res.headersSent` tells whether an answer began). */
  onFailed: (
    error: NodeJS.ErrnoException,
    req: ClientRequest,
    res: ClientResponse,
    target: ForwardTarget,
  ) => void;
  /** An idle pooled connection is closed after this long (below the 5 s keep-alive of Node's default server). */
  idleMs?: number;
  /** Idle connections kept per serve port. */
  maxIdlePerPort?: number;
}

/** Request headers never sent on: hop-by-hop ones, the Host and the ones the router sets itself. */
const REQUEST_DROPPED = new Set([
  ...HOP_BY_HOP_HEADERS,
  'expect',
  'host',
  'authorization',
  'cookie',
  'x-svc-console-caller',
  'x-svc-console-proxy-key',
  'x-request-id',
]);
/** Answer headers never passed back: hop-by-hop ones (Node frames the body for the client itself). */
const RESPONSE_DROPPED = HOP_BY_HOP_HEADERS;

/** The connection serving a client's response, for the shared `close` listener. */
const SERVING = Symbol('console-router.serving');
type ServedResponse = ClientResponse & { [SERVING]?: AgentConnection };

/** A client that went away before its answer was complete: that exchange cannot go on on the connection. */
function clientClosed(this: ServedResponse): void {
  const connection = this[SERVING];
  if (connection && connection.res === this && !this.writableFinished) connection.socket.destroy();
}

/** Where every agent connection's reads land (see the constructor). */
const SHARED_READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

function protocolError(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/**
 * One keep-alive connection to an agent's serve port, carrying one exchange at a time: the request head is
 * written as text, the answer is read by Node's own parser and written to the client's response (`node:http`'s,
 * or the front's `FrontResponse`), which frames it again. Every listener is bound once per connection, not per
 * request.
 */
export class AgentConnection {
  readonly socket: Socket;
  private readonly parser: HttpParser;
  req: ClientRequest | undefined;
  res: ClientResponse | undefined;
  target: ForwardTarget | undefined;
  /** Served an exchange before: a failure before any answer byte may be the agent closing it while idle. */
  reused = false;
  idleSince = 0;
  private keepAlive = true;
  private requestSent = false;
  private chunked = false;
  private hasBody = false;
  private socketPaused = false;
  private requestPaused = false;
  private informational = false;
  private answerBytes = false;
  private partialHeaders: string[] | undefined;
  private held: Buffer | undefined;
  private error: NodeJS.ErrnoException | undefined;
  private closed = false;

  constructor(
    readonly port: number,
    private readonly pool: ConnectionPool,
  ) {
    // Read into one buffer every agent connection shares (`onread`): no stream buffering per read. The parser
    // runs at once in the callback, and a body chunk is copied before it leaves it (`onBody`).
    const socket = net.connect({
      port,
      host: '127.0.0.1',
      onread: { buffer: SHARED_READ_BUFFER, callback: this.onRead },
    });
    socket.setNoDelay(true);
    this.socket = socket;
    const parser = new pool.Parser();
    parser.initialize(pool.Parser.RESPONSE, {}, 0, pool.Parser.kLenientNone);
    parser[pool.Parser.kOnHeaders] = this.onHeaders;
    parser[pool.Parser.kOnHeadersComplete] = this.onHeadersComplete;
    parser[pool.Parser.kOnBody] = this.onBody;
    parser[pool.Parser.kOnMessageComplete] = this.onMessageComplete;
    this.parser = parser;
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
  }

  /** Starts one exchange: the head now, the body (if any) as the client sends it. */
  start(req: ClientRequest, res: ClientResponse, target: ForwardTarget): void {
    this.req = req;
    this.res = res;
    this.target = target;
    this.keepAlive = true;
    this.informational = false;
    this.answerBytes = false;
    (res as ServedResponse)[SERVING] = this;
    res.once('close', clientClosed);
    const raw = req.rawHeaders;
    const hopByHop = connectionNominated(raw);
    let head = `${req.method} ${target.path} HTTP/1.1\r\nHost: 127.0.0.1:${this.port}\r\n`;
    for (let i = 0; i < raw.length; i += 2) {
      const lower = raw[i]!.toLowerCase();
      if (REQUEST_DROPPED.has(lower) || hopByHop?.has(lower)) continue;
      head += `${raw[i]}: ${raw[i + 1]}\r\n`;
    }
    head +=
      `X-Svc-Console-Caller: ${target.caller}\r\nX-Svc-Console-Proxy-Key: ${target.proxyKey}\r\n` +
      `X-Request-Id: ${target.requestId}\r\nConnection: keep-alive\r\n`;
    const headers = req.headers;
    this.chunked = headers['content-length'] === undefined && headers['transfer-encoding'] !== undefined;
    if (this.chunked) head += 'Transfer-Encoding: chunked\r\n';
    this.hasBody =
      this.chunked || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    this.requestSent = !this.hasBody;
    this.socket.write(`${head}\r\n`, 'latin1');
    if (!this.requestSent) {
      req.on('data', this.onRequestData);
      req.on('end', this.onRequestEnd);
    }
  }

  private readonly onRequestData = (chunk: Buffer) => {
    // An empty chunk would read as the end of a chunked body.
    if (this.closed || chunk.length === 0) return;
    const framed = this.chunked ? [`${chunk.length.toString(16)}\r\n`, chunk, '\r\n'] : [chunk];
    let flushed = true;
    for (const part of framed) flushed = this.socket.write(part) && flushed;
    if (!flushed && !this.requestPaused) {
      this.requestPaused = true;
      this.req?.pause();
      this.socket.once('drain', this.resumeRequest);
    }
  };

  private readonly resumeRequest = () => {
    this.requestPaused = false;
    this.req?.resume();
  };

  private readonly onRequestEnd = () => {
    if (this.closed) return;
    if (this.chunked) this.socket.write('0\r\n\r\n');
    this.requestSent = true;
    this.detachRequest();
  };

  private detachRequest(): void {
    const req = this.req;
    if (!req) return;
    req.removeListener('data', this.onRequestData);
    req.removeListener('end', this.onRequestEnd);
  }

  private readonly onRead = (length: number, buffer: Buffer): boolean => {
    this.onData(buffer.subarray(0, length));
    return true;
  };

  private onData(data: Buffer): void {
    if (this.closed) return;
    if (!this.res) {
      // Bytes from an agent with no request outstanding: the connection's framing cannot be trusted.
      this.socket.destroy();
      return;
    }
    this.answerBytes = true;
    const parsed = this.parser.execute(data);
    if (this.held) this.writeHeld();
    // Not `instanceof Error`: the parser's errors come from Node's own realm, which a test's sandbox does not
    // share.
    if (typeof parsed !== 'number') {
      this.fail(
        protocolError(
          `the agent's answer is not valid HTTP (${(parsed as NodeJS.ErrnoException).code})`,
          'EPROTO',
        ),
      );
    }
  }

  private readonly onHeaders = (headers: string[]) => {
    this.partialHeaders = this.partialHeaders ? this.partialHeaders.concat(headers) : headers;
  };

  private readonly onHeadersComplete: OnHeadersComplete = (
    _maj,
    _min,
    parsed,
    _m,
    _u,
    status,
    _s,
    upgrade,
    keep,
  ) => {
    const headers = parsed ?? this.partialHeaders ?? [];
    this.partialHeaders = undefined;
    const res = this.res;
    const target = this.target;
    if (!res || !target) return 1;
    if (status < 200) {
      if (status === 101 || upgrade) {
        this.fail(protocolError('the agent switched protocols on a plain HTTP request', 'EPROTO'));
        return 1;
      }
      // 100 Continue, 103 Early Hints: the final answer follows on the same connection.
      this.informational = true;
      return 1;
    }
    this.keepAlive = keep;
    this.pool.options.onAnswer(status, target);
    const hopByHop = connectionNominated(headers);
    const kept: string[] = [];
    let requestId = true;
    for (let i = 0; i < headers.length; i += 2) {
      const lower = headers[i]!.toLowerCase();
      if (RESPONSE_DROPPED.has(lower) || hopByHop?.has(lower)) continue;
      if (lower === 'x-request-id') requestId = false;
      kept.push(headers[i]!, headers[i + 1]!);
    }
    // The router's request id, unless the agent answered with one of its own.
    if (requestId) kept.push('X-Request-Id', target.requestId);
    try {
      res.writeHead(status, kept);
    } catch {
      // A header Node will not send (a character it refuses): the agent's answer cannot be relayed.
      this.fail(protocolError("the agent's answer has a header that cannot be relayed", 'EPROTO'));
      return 1;
    }
    return this.req?.method === 'HEAD' ? 1 : 0;
  };

  /**
   * A body chunk is held until the parser has read the whole of the socket's data, so that a small answer
   * goes out with its head and end in one write (`res.end(chunk)`); `onData` writes what is held before it
   * returns, so a streamed answer (server-sent events) is never delayed.
   */
  private readonly onBody = (chunk: Buffer) => {
    if (this.held) this.writeHeld();
    // A copy: the chunk is a view of the shared read buffer, which the next read overwrites, and a client's
    // response may keep what it was given until its socket can take it.
    this.held = Buffer.from(chunk);
  };

  private writeHeld(): void {
    const res = this.res;
    const chunk = this.held;
    this.held = undefined;
    if (res && chunk && !res.write(chunk) && !this.socketPaused) {
      this.socketPaused = true;
      this.socket.pause();
      res.once('drain', this.resumeSocket);
    }
  }

  private readonly resumeSocket = () => {
    this.socketPaused = false;
    this.socket.resume();
  };

  private readonly onMessageComplete = () => {
    if (this.informational) {
      this.informational = false;
      return;
    }
    const res = this.res;
    // The whole answer is in the client's response now: a pause kept for a slow reader has nothing left to
    // hold back, and the connection can serve another exchange.
    if (this.socketPaused) {
      res?.removeListener('drain', this.resumeSocket);
      this.socketPaused = false;
      this.socket.resume();
    }
    const reusable = this.keepAlive && this.requestSent && !this.closed;
    const held = this.held;
    this.held = undefined;
    this.detachRequest();
    this.clear();
    res?.end(held);
    if (reusable) this.pool.release(this);
    else this.socket.destroy();
  };

  private readonly onEnd = () => {
    // An answer delimited by the close of the connection ends here; anything else was cut.
    if (this.res) {
      const error = this.parser.finish();
      if (error || this.res)
        this.fail(protocolError('the agent closed the connection mid-answer', 'ECONNRESET'));
    }
    this.socket.destroy();
  };

  private readonly onError = (error: NodeJS.ErrnoException) => {
    this.error = error;
  };

  private readonly onClose = () => {
    this.closed = true;
    this.pool.forget(this);
    if (this.res) this.fail(this.error ?? protocolError('the agent closed the connection', 'ECONNRESET'));
    this.parser.close();
  };

  private clear(): void {
    this.req = undefined;
    this.res = undefined;
    this.target = undefined;
  }

  /** Ends the exchange in progress with an error: retried once, answered as JSON, or the client cut. */
  private fail(error: NodeJS.ErrnoException): void {
    const req = this.req;
    const res = this.res;
    const target = this.target;
    this.held = undefined;
    this.detachRequest();
    this.clear();
    this.socket.destroy();
    if (!req || !res || !target) return;
    // A connection the agent closed while it sat idle fails before any answer byte: a request whose body was
    // not streamed yet goes again, once, on a new connection.
    if (this.reused && !this.answerBytes && !this.hasBody && !res.headersSent && !res.destroyed) {
      this.pool.forward(req, res, target, true);
      return;
    }
    this.pool.options.onFailed(error, req, res, target);
  }
}
