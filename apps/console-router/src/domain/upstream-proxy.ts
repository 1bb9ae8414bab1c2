import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import type { Logger } from '@svc/service-kit';
import { rawHttpAnswer } from './problem-answer';
import type { ProblemAnswer } from './problem-answer';
import type { RouteActivity } from './route-activity';

/** Where one admitted request goes and what it carries. */
export interface UpstreamTarget {
  agentId: string;
  servePort: number;
  /** Path and query the agent receives. */
  path: string;
  /** Headers set on the forwarded request (the caller and the agent's proxy key). */
  headers: Record<string, string>;
}

export interface UpstreamProxyOptions {
  logger: Logger;
  activity: RouteActivity;
  /** A WebSocket with no bytes either way for this long is closed. */
  wsIdleMs: number;
  /** What to answer when the agent cannot be reached before anything was sent to the client. */
  onUnreachable: (error: NodeJS.ErrnoException, target: UpstreamTarget) => ProblemAnswer;
}

/** Request headers never forwarded: hub credentials, cookies and anything claiming to speak for the router. */
const STRIPPED_HEADERS = ['authorization', 'cookie', 'x-svc-console-caller', 'x-svc-console-proxy-key'];

interface Tunnel {
  agentId: string;
  client: Duplex;
  upstream: Socket;
  lastActivity: number;
}

/**
 * The reverse proxy to agents' serve ports, on `http-proxy-3`:
 *
 * - HTTP goes through one keep-alive `http.Agent` of the router's own (the process-global agent is never
 *   touched); WebSocket upgrades get a connection each.
 * - Every failure is caught: an `error` listener on the proxy, a callback per call, an `error` handler on each
 *   client and upgrade socket. An agent that cannot be reached before an answer started gets the caller's
 *   JSON answer; a failure midway ends the client connection.
 * - An upgrade the agent answers with anything but 101 is relayed and then both sides are closed.
 * - Idle policy: a WebSocket with no bytes either way for `wsIdleMs` is closed. The agent console pings its
 *   clients every 30 s, so a live terminal never idles out; a client that vanished is closed by the agent's
 *   missed pong or, failing that, here.
 * - Activity: a 2xx answer or bytes on an open WebSocket mark the route active (throttled per route).
 */
export function createUpstreamProxy(options: UpstreamProxyOptions) {
  const { logger, activity } = options;
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 32, scheduling: 'lifo', timeout: 60_000 });
  const proxy = createProxyServer({ changeOrigin: true, xfwd: false, ws: true });
  const targets = new WeakMap<IncomingMessage, UpstreamTarget>();
  const tunnels = new Set<Tunnel>();

  proxy.on('error', (error, req) => {
    // Per-call callbacks answer the client; this listener only keeps an unexpected emit from crashing us. A
    // peer that went away (reset, broken pipe) is routine.
    const code = (error as NodeJS.ErrnoException).code;
    const level = code === 'ECONNRESET' || code === 'EPIPE' ? 'debug' : 'warn';
    logger[level]({ err: error, agent_id: targets.get(req)?.agentId }, 'proxy error');
  });

  proxy.on('proxyRes', (proxyRes, req, res) => {
    const target = targets.get(req);
    const status = proxyRes.statusCode ?? 0;
    if (target && status >= 200 && status < 300) activity.touch(target.agentId);
    // An agent that dies mid-response: the client's response is cut too, never left hanging open.
    proxyRes.once('error', () => undefined);
    proxyRes.once('close', () => {
      if (!proxyRes.complete) {
        logger.info({ agent_id: target?.agentId }, 'agent connection lost mid-response');
        res.destroy();
      }
    });
  });

  proxy.on('proxyReqWs', (proxyReq, req, socket) => {
    const target = targets.get(req);
    if (!target) return;
    proxyReq.on('upgrade', (_res, upstream: Socket) => {
      const tunnel: Tunnel = { agentId: target.agentId, client: socket, upstream, lastActivity: Date.now() };
      const release = activity.opened(target.agentId);
      tunnels.add(tunnel);
      activity.touch(target.agentId);
      const seen = () => {
        tunnel.lastActivity = Date.now();
        activity.touch(target.agentId);
      };
      socket.on('data', seen);
      upstream.on('data', seen);
      upstream.on('error', (error) =>
        logger.debug({ err: error, agent_id: target.agentId }, 'upstream socket error'),
      );
      const closed = () => {
        tunnels.delete(tunnel);
        release();
        socket.destroy();
        upstream.destroy();
      };
      socket.once('close', closed);
      upstream.once('close', closed);
      // A client that reset while the agent was answering the upgrade has closed already, and its `close` will
      // not come again: end the tunnel now, or the agent's side (a terminal) would stay open.
      if (socket.destroyed || upstream.destroyed) closed();
    });
    // Anything but 101: http-proxy-3 relays the answer and ends the client; make sure both sides go.
    // http-proxy-3 relays the answer and then ends the client socket; the upstream connection is closed here,
    // and the client socket is destroyed shortly after even if its peer never reads the end.
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

  const sweepMs = Math.max(250, Math.min(30_000, Math.floor(options.wsIdleMs / 4)));
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const tunnel of tunnels) {
      if (now - tunnel.lastActivity < options.wsIdleMs) continue;
      logger.info({ agent_id: tunnel.agentId, idle_ms: now - tunnel.lastActivity }, 'idle WebSocket closed');
      tunnels.delete(tunnel);
      tunnel.client.destroy();
      tunnel.upstream.destroy();
    }
  }, sweepMs);
  sweeper.unref();

  function prepare(req: IncomingMessage, target: UpstreamTarget) {
    for (const name of STRIPPED_HEADERS) delete req.headers[name];
    Object.assign(req.headers, target.headers);
    req.url = target.path;
    targets.set(req, target);
    return `http://127.0.0.1:${target.servePort}`;
  }

  return {
    /** Forwards an admitted HTTP request. */
    web(req: IncomingMessage, res: ServerResponse, target: UpstreamTarget): void {
      const url = prepare(req, target);
      proxy.web(req, res, { target: url, agent }, (error) => {
        const err = error as NodeJS.ErrnoException;
        if (!res.headersSent && !res.writableEnded) {
          const answer = options.onUnreachable(err, target);
          res.writeHead(answer.status, answer.headers).end(answer.body);
        } else {
          logger.info({ err, agent_id: target.agentId }, 'agent connection failed mid-response');
          res.destroy();
        }
      });
    },

    /** Forwards an admitted WebSocket upgrade (the client socket already has its `error` handler). */
    ws(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpstreamTarget): void {
      const url = prepare(req, target);
      let answered = false;
      proxy.ws(req, socket, head, { target: url, agent: false }, (error) => {
        const err = error as NodeJS.ErrnoException;
        if (answered) return;
        answered = true;
        if (socket.writable && (socket as Socket).bytesWritten === 0) {
          socket.end(rawHttpAnswer(options.onUnreachable(err, target)));
          setTimeout(() => socket.destroy(), 1_000).unref();
        } else {
          socket.destroy();
        }
      });
    },

    /** WebSockets open through the proxy. */
    openTunnels(): number {
      return tunnels.size;
    },

    /** Closes open WebSockets and pooled connections. */
    close(): void {
      clearInterval(sweeper);
      for (const tunnel of tunnels) {
        tunnel.client.destroy();
        tunnel.upstream.destroy();
      }
      tunnels.clear();
      agent.destroy();
    },
  };
}

export type UpstreamProxy = ReturnType<typeof createUpstreamProxy>;
