import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  let closing: Promise<void> | undefined;
  return {
    server,
    url,
    port: address.port,
    close(graceMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
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
