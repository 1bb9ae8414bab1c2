import { createLogger, installShutdown, runMain, startHttpServer } from '@svc/service-kit/http';
import { buildApp } from './app';
import { loadConsoleRouterConfig } from './env';

runMain('console-router', async () => {
  const config = loadConsoleRouterConfig();
  const logger = createLogger({ name: 'console-router', level: config.logLevel });
  const router = buildApp({ config, logger });
  const server = await startHttpServer(router.app, { host: config.host, port: config.port, logger });
  router.attach(server.server);
  router.start();
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
    ],
  });
});
