import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes what is left. */
  close(graceMs?: number): Promise<void>;
}

export async function startHttpServer(
  app: Express,
  options: { host: string; port: number; logger?: Logger },
): Promise<RunningServer> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port, options.host);
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000;
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  options.logger?.info({ url }, 'listening');

  // Requests in flight, by method and path (no query string: it may carry a secret), so that a shutdown that
  // has to cut connections says which requests held it up.
  const inFlight = new Set<{ method?: string; path: string; res: ServerResponse }>();
  // Open connections and how many requests each is serving: on close, a connection that serves none (idle
  // keep-alive, or opened without a request yet) is ended at once instead of holding the shutdown.
  const connections = new Map<Socket, number>();
  let closing: Promise<void> | undefined;
  server.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    connections.set(socket, 0);
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = { method: req.method, path: (req.url ?? '').split('?')[0] ?? '', res };
    const socket = req.socket;
    inFlight.add(entry);
    connections.set(socket, (connections.get(socket) ?? 0) + 1);
    if (closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      inFlight.delete(entry);
      const serving = (connections.get(socket) ?? 1) - 1;
      connections.set(socket, serving);
      if (closing && serving === 0 && speaksHttp(socket)) socket.destroySoon();
    });
  });

  return {
    server,
    url,
    port: address.port,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          options.logger?.warn(
            { in_flight: [...inFlight].map((r) => `${r.method} ${r.path}`).slice(0, 20) },
            'closing the connections still open after the grace period',
          );
          server.closeAllConnections();
        }, graceMs);
        force.unref();
        // A keep-alive connection would otherwise stay open until its idle timeout: answers still to be sent
        // ask the client to close, each connection ends once it serves no request, and idle ones end now.
        for (const { res } of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        for (const [socket, serving] of connections)
          if (serving === 0 && speaksHttp(socket)) socket.destroy();
      });
      return closing;
    },
  };
}

/**
 * Whether a connection still speaks HTTP: Node detaches its parser when the connection is upgraded (a WebSocket),
 * and such a connection belongs to whoever took the upgrade, which closes it its own way.
 */
function speaksHttp(socket: Socket): boolean {
  return (socket as Socket & { parser?: unknown }).parser != null;
}

export interface ShutdownStep {
  name: string;
  close: () => Promise<void>;
}

/**
 * Graceful shutdown on SIGTERM/SIGINT: run the steps in order (typically: stop the HTTP server, close
 * workers, close pools), then exit 0. A second signal, or steps taking longer than `timeoutMs`, exit 1.
 */
export function installShutdown(options: {
  logger: Logger;
  steps: ShutdownStep[];
  timeoutMs?: number;
}): () => Promise<void> {
  const { logger } = options;
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, options.timeoutMs ?? 20_000);
    timer.unref();
    for (const step of options.steps) {
      try {
        await step.close();
      } catch (error) {
        logger.error({ err: error, step: step.name }, 'shutdown step failed');
      }
    }
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  return () => shutdown('manual');
}
