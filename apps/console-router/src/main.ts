import { createLogger, installShutdown, runMain, startHttpServer } from '@svc/service-kit';
import { buildApp } from './app';
import { loadConsoleRouterConfig } from './env';

runMain('console-router', async () => {
  const config = loadConsoleRouterConfig();
  const logger = createLogger({ name: 'console-router', level: config.logLevel });
  const server = await startHttpServer(buildApp({ config, logger }), {
    host: config.host,
    port: config.port,
    logger,
  });
  installShutdown({ logger, steps: [{ name: 'http server', close: () => server.close() }] });
});
