import type { Server, ServerResponse } from 'node:http';
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

  // Open connections, tracked per connection (nothing is done per request): on close, a connection that
  // serves no request (idle keep-alive, or opened without a request yet) is ended at once instead of holding
  // the shutdown until its idle timeout.
  const connections = new Set<Socket>();
  let closing: Promise<void> | undefined;
  server.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  return {
    server,
    url,
    port: address.port,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          // Which requests held the shutdown: method and path (no query string: it may carry a secret).
          const inFlight = [...connections]
            .map(responseOf)
            .filter((res): res is ServerResponse => res !== undefined)
            .map((res) => `${res.req.method} ${(res.req.url ?? '').split('?')[0]}`);
          options.logger?.warn(
            { in_flight: inFlight.slice(0, 20) },
            'closing the connections still open after the grace period',
          );
          server.closeAllConnections();
        }, graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        // Idle connections end now; one serving a request asks its client to close (when the answer has not
        // started yet) and ends once the answer is sent.
        for (const socket of connections) {
          if (!speaksHttp(socket)) continue;
          const res = responseOf(socket);
          if (!res) {
            socket.destroy();
            continue;
          }
          if (!res.headersSent) res.setHeader('connection', 'close');
          res.once('close', () => socket.destroySoon());
        }
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

/** The answer a connection is sending now (Node keeps it on the socket while a request is served). */
function responseOf(socket: Socket): ServerResponse | undefined {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
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
