import { maxHeaderSize } from 'node:http';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AgentPath } from '../domain/route-table';
import { FrontConnection } from './front-connection';
import type { FrontContext } from './front-connection';
import { keepAliveTail } from './front-exchange';
import type { FrontRequest, FrontResponse } from './front-exchange';
import type { HttpParserClass } from './http-parser';

export interface ConsoleFrontOptions {
  Parser: HttpParserClass;
  methods: readonly string[];
  /** The agent route a request target names (the front's to answer); anything else goes to `node:http`. */
  route(url: string): AgentPath | undefined;
  /** Answers a request the front took; `path` is what `route` gave for it. */
  handle(req: FrontRequest, res: FrontResponse, path: AgentPath): void;
  /** An exception while answering on a connection (which was closed). */
  failed(error: unknown): void;
}

/**
 * The router's front (decision 65): every connection the server accepts is read here first, and the requests to
 * agent routes are answered without `node:http`'s request and response objects; a connection carrying anything
 * else is handed to `node:http` (see `FrontConnection`). One sweeper a second applies the server's timeouts as
 * `node:http` does (0: none): `408` to a head or request too slow, an idle connection closed.
 */
export class ConsoleFront implements FrontContext {
  readonly Parser: HttpParserClass;
  readonly methods: readonly string[];
  /** The server's limits, read on `attach` (until then `node:http`'s defaults). */
  maxHeaderSize = maxHeaderSize;
  private headersTimeoutMs = 60_000;
  private requestTimeoutMs = 300_000;
  private keepAliveMs = 5_000;
  /** The end of a kept-alive answer's head, with the server's idle timeout. */
  keepAliveTail = keepAliveTail(this.keepAliveMs);
  private nodeConnection: ((socket: Socket) => void)[] = [];
  private readonly connections = new Set<FrontConnection>();
  private readonly sweeper: NodeJS.Timeout;
  private dateValue = '';
  private dateSecond = 0;

  constructor(private readonly options: ConsoleFrontOptions) {
    this.Parser = options.Parser;
    this.methods = options.methods;
    this.sweeper = setInterval(() => this.sweep(), 1_000);
    this.sweeper.unref();
  }

  /**
   * Puts the front before `server`: its `connection` listeners (`node:http`'s own, and any other) then run only
   * for the connections the front hands over; the server's limits and timeouts apply to the front too.
   */
  attach(server: Server): void {
    const listeners = server.listeners('connection') as ((socket: Socket) => void)[];
    this.nodeConnection = listeners.map((listener) => (socket: Socket) => listener.call(server, socket));
    // 0 is "no limit", as in node:http.
    this.headersTimeoutMs = server.headersTimeout;
    this.requestTimeoutMs = server.requestTimeout;
    this.keepAliveMs = server.keepAliveTimeout;
    this.keepAliveTail = keepAliveTail(this.keepAliveMs);
    server.removeAllListeners('connection');
    server.on('connection', this.accept);
  }

  /** The `connection` listener of the router's server. */
  readonly accept = (socket: Socket): void => {
    this.connections.add(new FrontConnection(socket, this));
  };

  /** Connections the front reads now. */
  get size(): number {
    return this.connections.size;
  }

  route(url: string): AgentPath | undefined {
    return this.options.route(url);
  }

  handle(req: FrontRequest, res: FrontResponse, path: AgentPath): void {
    this.options.handle(req, res, path);
  }

  handOff(socket: Socket): void {
    for (const listener of this.nodeConnection) listener(socket);
  }

  failed(error: unknown): void {
    this.options.failed(error);
  }

  forget(connection: FrontConnection): void {
    this.connections.delete(connection);
  }

  /** `Date` in the IMF-fixdate form, made once a second. */
  date(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.dateSecond) {
      this.dateSecond = second;
      this.dateValue = new Date(now).toUTCString();
    }
    return this.dateValue;
  }

  /** Ends every connection the front reads: free ones now, busy ones after their answer (shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    for (const connection of this.connections) connection.close();
    this.connections.clear();
  }

  private sweep(): void {
    const now = Date.now();
    const { headersTimeoutMs, requestTimeoutMs, keepAliveMs } = this;
    for (const connection of this.connections) {
      const slowHead =
        headersTimeoutMs > 0 &&
        connection.headStartedAt > 0 &&
        now - connection.headStartedAt > headersTimeoutMs;
      const slowRequest =
        requestTimeoutMs > 0 &&
        connection.requestStartedAt > 0 &&
        now - connection.requestStartedAt > requestTimeoutMs;
      const idle =
        keepAliveMs > 0 &&
        !connection.busy &&
        connection.headStartedAt === 0 &&
        now - connection.idleSince > keepAliveMs;
      if (slowHead || slowRequest) connection.timedOut();
      else if (idle) connection.socket.destroy();
    }
  }
}
