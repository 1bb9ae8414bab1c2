import { AgentConnection } from './agent-connection';
import type { AgentHttpForwarderOptions, ConnectionPool, ForwardTarget } from './agent-connection';
import type { ClientRequest, ClientResponse } from './client-exchange';
import type { HttpParserClass } from './http-parser';

export type { AgentHttpForwarderOptions, ForwardTarget } from './agent-connection';

/**
 * Forwards admitted HTTP requests to agents' serve ports over pooled keep-alive connections of its own (never
 * the process-global agent), reading answers with Node's own parser; see `AgentConnection` for one exchange.
 *
 * - An idle connection is reused last-in first-out and closed after `idleMs` idle (a sweeper closes the ones
 *   nobody takes, so file descriptors return to their baseline); a connection the agent closed while idle is
 *   detected by the failed exchange, which is retried once on a new connection when no body was sent.
 * - An answer without keep-alive, an answer that came before the request's body was sent in full, and any
 *   error end the connection; nothing is reused whose framing is in doubt.
 */
export class AgentHttpForwarder implements ConnectionPool {
  readonly Parser: HttpParserClass;
  private readonly idle = new Map<number, AgentConnection[]>();
  private readonly live = new Set<AgentConnection>();
  private readonly idleMs: number;
  private readonly maxIdle: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(readonly options: AgentHttpForwarderOptions) {
    this.Parser = options.Parser;
    this.idleMs = options.idleMs ?? 4_000;
    this.maxIdle = options.maxIdlePerPort ?? 256;
    this.sweeper = setInterval(() => this.sweep(), Math.max(250, Math.floor(this.idleMs / 2)));
    this.sweeper.unref();
  }

  /** Sends one admitted request to its agent; the answer, or the failure, reaches `res`. */
  forward(req: ClientRequest, res: ClientResponse, target: ForwardTarget, fresh = false): void {
    const connection = (fresh ? undefined : this.take(target.servePort)) ?? this.open(target.servePort);
    connection.start(req, res, target);
  }

  /** Connections open to agents (idle and busy). */
  get connections(): number {
    return this.live.size;
  }

  release(connection: AgentConnection): void {
    let list = this.idle.get(connection.port);
    if (list === undefined) {
      list = [];
      this.idle.set(connection.port, list);
    }
    if (list.length >= this.maxIdle) {
      connection.socket.destroy();
      return;
    }
    connection.reused = true;
    connection.idleSince = Date.now();
    list.push(connection);
  }

  forget(connection: AgentConnection): void {
    this.live.delete(connection);
    const list = this.idle.get(connection.port);
    if (!list) return;
    const at = list.lastIndexOf(connection);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.idle.delete(connection.port);
  }

  /**
   * Closes every connection, idle or busy, to a port not in `ports` (the serve ports of started agents): a
   * stopped or evicted agent keeps no connection of the router's; returns how many were closed.
   */
  closeExcept(ports: ReadonlySet<number>): number {
    let closed = 0;
    for (const connection of this.live) {
      if (ports.has(connection.port)) continue;
      connection.socket.destroy();
      closed += 1;
    }
    return closed;
  }

  /** Closes every connection, idle or busy (shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    for (const connection of this.live) connection.socket.destroy();
  }

  private open(port: number): AgentConnection {
    const connection = new AgentConnection(port, this);
    this.live.add(connection);
    return connection;
  }

  private take(port: number): AgentConnection | undefined {
    const list = this.idle.get(port);
    if (!list) return undefined;
    const now = Date.now();
    while (list.length > 0) {
      const connection = list.pop()!;
      if (!connection.socket.destroyed && now - connection.idleSince < this.idleMs) return connection;
      connection.socket.destroy();
    }
    return undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const list of this.idle.values()) {
      // Oldest first: the list is pushed and popped at its end.
      while (list.length > 0 && now - list[0]!.idleSince >= this.idleMs) list.shift()!.socket.destroy();
    }
  }
}
