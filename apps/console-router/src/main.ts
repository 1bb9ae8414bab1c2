import {
  createLogger,
  createMetricsRegistry,
  installShutdown,
  runMain,
  serializedReload,
  startHttpServer,
  startOptionalMetricsListener,
  startTracing,
} from '@svc/service-kit/http';
import { createConsoleRouterService } from './app';
import { loadConsoleRouterConfig } from './env';
import { fdsNeeded, openFileLimit } from './transport/fd-limit';

// SIGHUP re-reads the runtime key file (a rotated key is taken without a restart); until the router is built,
// a SIGHUP is ignored (the file is read at start anyway) instead of ending the process.
let onHangup: () => void = () => undefined;
process.on('SIGHUP', () => onHangup());

runMain('console-router', async () => {
  const config = loadConsoleRouterConfig();
  const logger = createLogger({ name: 'console-router', level: config.logLevel });
  // Spans for the router's own operations only: forwarded agent requests keep their traceparent untouched.
  const tracing = startTracing({ serviceName: 'console-router', logger });
  const registry = createMetricsRegistry('console-router');
  const router = createConsoleRouterService({
    config,
    logger,
    metrics: { registry, serveRoute: config.metricsPort === undefined },
  });
  const server = await startHttpServer(router.app, { host: config.host, port: config.port, logger });
  const metricsSteps = await startOptionalMetricsListener(registry, {
    host: config.host,
    port: config.metricsPort,
    logger,
  });
  router.attach(server.server);
  router.start();
  onHangup = serializedReload(() => router.reloadKey());
  // Each WebSocket holds two descriptors: warn when the limit cannot carry CONSOLE_ROUTER_WS_MAX_CONNECTIONS.
  const fdLimit = openFileLimit();
  const needed = fdsNeeded(config.wsLimits.maxConnections);
  if (fdLimit !== undefined && fdLimit < needed)
    logger.warn(
      { open_file_limit: fdLimit, needed, max_connections: config.wsLimits.maxConnections },
      'the open-file limit is below what CONSOLE_ROUTER_WS_MAX_CONNECTIONS needs; raise it (ulimit -n, LimitNOFILE=) or lower the limit',
    );
  const missing = router.routes.missingSettings();
  if (missing.length > 0) logger.warn({ missing }, 'not routing until these are set; /readyz names them');
  installShutdown({
    logger,
    steps: [
      {
        name: 'http server',
        close: async () => {
          router.close();
          await server.close();
        },
      },
      ...metricsSteps,
      { name: 'traces', close: () => tracing.shutdown() },
    ],
  });
});
