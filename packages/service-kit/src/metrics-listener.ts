import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createHttpApp } from './http-app';
import { mountMetricsRoute } from './metrics';
import { startHttpServer } from './server';
import type { RunningServer } from './server';

/**
 * A listener of its own for `GET /metrics` (anything else answers a JSON 404), for deployments that keep
 * metrics off the service's public listener: bind it to a port the load balancer, ingress or tunnel does
 * not forward.
 */
export function startMetricsListener(
  registry: Registry,
  options: { host: string; port: number; logger: Logger },
): Promise<RunningServer> {
  const logger = options.logger.child({ listener: 'metrics' });
  const app = createHttpApp({ logger, configure: (express) => mountMetricsRoute(express, registry) });
  return startHttpServer(app, { host: options.host, port: options.port, logger });
}
