import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createHttpApp } from './http-app';
import { mountMetricsRoute } from './metrics';
import { startHttpServer } from './server';
import type { RunningServer, ShutdownStep } from './server';

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

/**
 * The metrics listener of a service whose settings may name a metrics port: started when `port` is set, and
 * returned as the shutdown steps that stop it (none when the public listener serves `/metrics` itself).
 */
export async function startOptionalMetricsListener(
  registry: Registry,
  options: { host: string; port: number | undefined; logger: Logger },
): Promise<ShutdownStep[]> {
  if (options.port === undefined) return [];
  const server = await startMetricsListener(registry, { ...options, port: options.port });
  return [{ name: 'metrics listener', close: () => server.close(1_000) }];
}
