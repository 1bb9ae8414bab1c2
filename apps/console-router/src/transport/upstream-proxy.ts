import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import type { Logger } from '@svc/service-kit/http';
import type { ProxyStats } from '../domain/proxy-metrics';
import { ACTIVITY_THROTTLE_MS } from '../domain/route-activity';
import type { RouteActivity } from '../domain/route-activity';
import { AgentHttpForwarder } from './agent-http-forwarder';
import type { ForwardTarget } from './agent-http-forwarder';
import type { ClientRequest, ClientResponse } from './client-exchange';
import type { HttpParserClass } from './http-parser';
import { rawHttpAnswer } from './problem-answer';
import type { ProblemAnswer } from './problem-answer';
import { FrameScanner, closeFrame } from './websocket-frames';

/** Where one admitted request goes and what it carries (`x-svc-console-caller`, the agent's proxy key, the id). */
export interface UpstreamTarget extends ForwardTarget {
  /** For a WebSocket: whether its caller may still use the route (asked when the route table changes). */
  stillAllowed?: () => boolean;
}

export interface UpstreamProxyOptions {
  logger: Logger;
  activity: RouteActivity;
  /** A WebSocket with no bytes either way for this long is closed. */
  wsIdleMs: number;
  /** The largest message a caller may send to an agent (fragments summed); a larger one closes with 1009. */
  wsMaxMessageBytes: number;
  /** Told when a WebSocket was closed for a message over `wsMaxMessageBytes`; returns the close reason. */
  onMessageTooLarge: () => string;
  /** What to answer when the agent cannot be reached before anything was sent to the client. */
  onUnreachable: (error: NodeJS.ErrnoException, target: UpstreamTarget) => ProblemAnswer;
  /** Counts of forwarded requests, agents' answers and failures (plain increments). */
  stats: ProxyStats;
  /** Node's HTTP parser, for agents' answers on the router's own pooled connections (`AgentHttpForwarder`). */
  responseParser: HttpParserClass;
}

/** Request headers never forwarded: hub credentials, cookies and anything claiming to speak for the router. */
const STRIPPED_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-svc-console-caller',
  'x-svc-console-proxy-key',
] as const;

/**
 * One open WebSocket: both sockets, the frame scanners of both directions (headers only) and what the sweeper
 * and the access re-check need. Its listeners are its own methods, bound once.
 */
class Tunnel {
  /** Bytes read on both sides when the sweeper last looked. */
  bytes: number;
  /** When the sweeper last saw the byte count move (or the tunnel opened). */
  lastActivity = Date.now();
  /** Closing on a limit: the client socket is ended with a close frame, not cut. */
  closing = false;
  readonly fromClient: FrameScanner;
  readonly fromAgent = new FrameScanner();
  /** Set by the proxy: what to do when the tunnel ends, and when a caller's message is too large. */
  onClosed: (tunnel: Tunnel) => void = () => undefined;
  onTooLarge: (tunnel: Tunnel) => void = () => undefined;

  constructor(
    readonly agentId: string,
    readonly stillAllowed: (() => boolean) | undefined,
    readonly client: Socket,
    readonly upstream: Socket,
    maxMessageBytes: number,
    readonly release: () => void,
  ) {
    this.bytes = client.bytesRead + upstream.bytesRead;
    this.fromClient = new FrameScanner(maxMessageBytes);
    this.clientData = this.clientData.bind(this);
    this.agentData = this.agentData.bind(this);
    this.ended = this.ended.bind(this);
  }

  /** Runs before the pipe writes the chunk to the agent (registered first), so a refused message never leaves. */
  clientData(chunk: Buffer): void {
    if (!this.closing && !this.fromClient.feed(chunk)) this.onTooLarge(this);
  }

  agentData(chunk: Buffer): void {
    this.fromAgent.feed(chunk);
  }

  ended(): void {
    this.onClosed(this);
  }

  /**
   * Closes the WebSocket with `code` and `reason` to the client: the agent's side is cut first (so nothing more
   * reaches it), then the client gets the close frame when its direction is on a frame boundary (cut otherwise)
   * and is destroyed a second later if it does not close first.
   */
  closeWith(code: number, reason: string): void {
    this.closing = true;
    this.upstream.destroy();
    const client = this.client;
    if (this.fromAgent.atBoundary && client.writable) {
      client.end(closeFrame(code, reason));
      // The agent's side is gone (and with it the pipe): keep reading so the client's own close and end
      // arrive and the socket closes as soon as the client answers.
      client.resume();
    } else client.destroy();
    setTimeout(() => client.destroy(), 1_000).unref();
  }

  destroy(): void {
    this.client.destroy();
    this.upstream.destroy();
  }
}

/** What the proxy needs to know about a request it forwards, kept on the request itself (no side table). */
const FORWARDED = Symbol('console-router.forwarded');
type ForwardedRequest = IncomingMessage & { [FORWARDED]?: UpstreamTarget };

/**
 * The reverse proxy to agents' serve ports:
 *
 * - Plain HTTP goes over the router's own pooled connections, read with Node's HTTP parser
 *   (`AgentHttpForwarder`, decisions 63 and 69). WebSocket upgrades go through `http-proxy-3`, a connection
 *   each, the call options per serve port built once (a parsed target URL, so the library parses nothing).
 * - An open WebSocket is closed when its caller loses access (`recheckTunnels`, decision 64).
 * - Every failure is caught: an `error` listener on the proxy, a callback per call, an `error` handler on each
 *   client and upgrade socket. An agent that cannot be reached before an answer started gets the caller's
 *   JSON answer; a failure midway ends the client connection.
 * - An upgrade the agent answers with anything but 101 is relayed and then both sides are closed.
 * - Idle policy: a WebSocket with no bytes either way for `wsIdleMs` is closed. The agent console pings its
 *   clients every 30 s, so a live terminal never idles out; a client that vanished is closed by the agent's
 *   missed pong or, failing that, here. The sweeper reads the sockets' byte counters.
 * - Message size (decision 91): each direction's frame headers are followed (`FrameScanner`, payloads skipped);
 *   a caller's message over `wsMaxMessageBytes` cuts the agent's side before it is forwarded and closes the
 *   client with 1009 and a reason naming the limit.
 * - Memory per WebSocket (decision 91): one `Tunnel` whose listeners are its bound methods; the proxy's
 *   handlers are shared, and no timer is kept per socket.
 * - Activity: a 2xx answer or bytes on an open WebSocket mark the route active (throttled per route).
 */
export function createUpstreamProxy(options: UpstreamProxyOptions) {
  const { logger, activity, stats } = options;
  const proxy = createProxyServer({
    changeOrigin: true,
    xfwd: false,
    ws: true,
    // The router sets `req.url` to the agent's path itself: no target path to prepend, nothing to re-parse.
    prependPath: false,
    toProxy: true,
  });
  const tunnels = new Set<Tunnel>();
  // Shared by every tunnel: no closure per WebSocket.
  const upstreamError = (error: Error) => logger.debug({ err: error }, 'upstream socket error');
  // Either side closing ends the tunnel once; a tunnel closed on purpose (idle, access, a limit) is gone
  // from the set already, and a limit's close frame to the client is not cut here.
  const closed = (tunnel: Tunnel) => {
    if (!tunnels.delete(tunnel)) return;
    tunnel.release();
    tunnel.destroy();
  };
  const tooLarge = (tunnel: Tunnel) => {
    const reason = options.onMessageTooLarge();
    logger.info({ agent_id: tunnel.agentId }, 'console WebSocket closed: message too large');
    tunnels.delete(tunnel);
    tunnel.release();
    tunnel.closeWith(1009, reason);
  };
  /** Call options per serve port: `{ target }` parsed once. */
  const wsOptions = new Map<number, { target: URL; agent: false }>();
  const targetOf = (port: number) => new URL(`http://127.0.0.1:${port}`);
  proxy.on('error', (error, req) => {
    // Per-call callbacks answer the client; this listener only keeps an unexpected emit from crashing us. A
    // peer that went away (reset, broken pipe) is routine.
    const code = (error as NodeJS.ErrnoException).code;
    const level = code === 'ECONNRESET' || code === 'EPIPE' ? 'debug' : 'warn';
    logger[level]({ err: error, agent_id: (req as ForwardedRequest)[FORWARDED]?.agentId }, 'proxy error');
  });

  proxy.on('proxyReqWs', (proxyReq, req, socket) => {
    const target = (req as ForwardedRequest)[FORWARDED];
    if (!target) return;
    proxyReq.on('upgrade', (_res, upstream: Socket) => {
      const client = socket as Socket;
      const tunnel = new Tunnel(
        target.agentId,
        target.stillAllowed,
        client,
        upstream,
        options.wsMaxMessageBytes,
        activity.opened(target.agentId),
      );
      tunnel.onClosed = closed;
      tunnel.onTooLarge = tooLarge;
      tunnels.add(tunnel);
      activity.touch(target.agentId);
      upstream.on('error', upstreamError);
      // Registered before http-proxy-3 pipes the sockets (its own `upgrade` listener comes after this one): the
      // scanners see each chunk before it is written on.
      client.on('data', tunnel.clientData);
      upstream.on('data', tunnel.agentData);
      client.once('close', tunnel.ended);
      upstream.once('close', tunnel.ended);
      // A client that reset while the agent was answering the upgrade has closed already, and its `close` will
      // not come again: end the tunnel now, or the agent's side (a terminal) would stay open.
      if (client.destroyed || upstream.destroyed) closed(tunnel);
    });
    // Anything but 101: http-proxy-3 relays the answer and then ends the client socket; the upstream
    // connection is closed here, and the client socket is destroyed shortly after even if its peer never reads
    // the end.
    proxyReq.on('response', (res: IncomingMessage) => {
      const closeUpstream = () => proxyReq.destroy();
      const closeClient = () => setTimeout(() => socket.destroy(), 1_000).unref();
      res.once('end', () => {
        closeUpstream();
        closeClient();
      });
      res.once('error', () => {
        closeUpstream();
        socket.destroy();
      });
      setTimeout(() => {
        closeUpstream();
        socket.destroy();
      }, 10_000).unref();
    });
  });

  // One timer for the idle policy and WebSocket activity: often enough for both the idle limit and the
  // activity throttle, never per chunk.
  const sweepMs = Math.max(250, Math.min(30_000, Math.floor(options.wsIdleMs / 4), ACTIVITY_THROTTLE_MS));
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const tunnel of tunnels) {
      const bytes = tunnel.client.bytesRead + tunnel.upstream.bytesRead;
      if (bytes !== tunnel.bytes) {
        tunnel.bytes = bytes;
        tunnel.lastActivity = now;
        activity.touch(tunnel.agentId);
        continue;
      }
      if (now - tunnel.lastActivity < options.wsIdleMs) continue;
      logger.info({ agent_id: tunnel.agentId, idle_ms: now - tunnel.lastActivity }, 'idle WebSocket closed');
      tunnels.delete(tunnel);
      tunnel.release();
      tunnel.destroy();
    }
  }, sweepMs);
  sweeper.unref();

  /** Headers for the agent: no hub credential or cookie, the router's caller, key and request id. */
  function prepare(req: ForwardedRequest, target: UpstreamTarget): void {
    const headers = req.headers;
    for (const name of STRIPPED_HEADERS) if (headers[name] !== undefined) delete headers[name];
    headers['x-svc-console-caller'] = target.caller;
    headers['x-svc-console-proxy-key'] = target.proxyKey;
    headers['x-request-id'] = target.requestId;
    req.url = target.path;
    req[FORWARDED] = target;
  }

  /** An agent unreachable before an answer began gets the caller's JSON answer; later, the client is cut. */
  function failed(err: NodeJS.ErrnoException, response: ClientResponse, target: UpstreamTarget) {
    stats.httpUpstreamErrors += 1;
    if (!response.headersSent && !response.writableEnded && !response.destroyed) {
      const answer = options.onUnreachable(err, target);
      response.writeHead(answer.status, answer.headers).end(answer.body);
    } else {
      logger.info({ err, agent_id: target.agentId }, 'agent connection failed mid-response');
      response.destroy();
    }
  }

  const forwarder = new AgentHttpForwarder({
    Parser: options.responseParser,
    onAnswer: (status, target) => {
      stats.answered(status);
      if (status >= 200 && status < 300) activity.touch(target.agentId);
    },
    onFailed: (error, _req, res, target) => failed(error, res, target),
  });

  return {
    /** Forwards an admitted HTTP request. */
    web(client: ClientRequest, response: ClientResponse, target: UpstreamTarget): void {
      stats.http += 1;
      forwarder.forward(client, response, target);
    },

    /** Forwards an admitted WebSocket upgrade (the client socket already has its `error` handler). */
    ws(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpstreamTarget): void {
      prepare(req, target);
      let call = wsOptions.get(target.servePort);
      if (call === undefined) {
        if (wsOptions.size >= 65_536) wsOptions.clear();
        call = { target: targetOf(target.servePort), agent: false };
        wsOptions.set(target.servePort, call);
      }
      let answered = false;
      stats.ws += 1;
      proxy.ws(req, socket, head, call, (error) => {
        const err = error as NodeJS.ErrnoException;
        if (answered) return;
        answered = true;
        stats.wsUpstreamErrors += 1;
        if (socket.writable && (socket as Socket).bytesWritten === 0) {
          socket.end(rawHttpAnswer(options.onUnreachable(err, target)));
          setTimeout(() => socket.destroy(), 1_000).unref();
        } else {
          socket.destroy();
        }
      });
    },

    /**
     * Closes the WebSockets whose callers may no longer use their routes (asked when the route table
     * changes: a member removed, an agent stopped or evicted); returns how many were closed.
     */
    recheckTunnels(): number {
      let closed = 0;
      for (const tunnel of tunnels) {
        if (!tunnel.stillAllowed || tunnel.stillAllowed()) continue;
        logger.info({ agent_id: tunnel.agentId }, 'console WebSocket closed: access withdrawn');
        tunnels.delete(tunnel);
        tunnel.release();
        tunnel.destroy();
        closed += 1;
      }
      return closed;
    },

    /** Closes the pooled connections to ports not in `ports` (agents stopped or gone); returns how many. */
    closeConnectionsExcept(ports: ReadonlySet<number>): number {
      return forwarder.closeExcept(ports);
    },

    /** Connections held to agents for plain HTTP (idle and busy). */
    upstreamConnections(): number {
      return forwarder.connections;
    },

    /** WebSockets open through the proxy. */
    openTunnels(): number {
      return tunnels.size;
    },

    /** Closes open WebSockets and pooled connections. */
    close(): void {
      clearInterval(sweeper);
      for (const tunnel of tunnels) {
        tunnel.release();
        tunnel.destroy();
      }
      tunnels.clear();
      forwarder.close();
    },
  };
}

export type UpstreamProxy = ReturnType<typeof createUpstreamProxy>;
