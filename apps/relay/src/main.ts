import { createLogger, installShutdown, runMain, startHttpServer } from '@svc/service-kit';
import { buildApp } from './app';
import { loadRelayConfig } from './env';
import { missingSettings } from './use-cases/health/check-readiness';

runMain('relay', async () => {
  const config = loadRelayConfig();
  const logger = createLogger({ name: 'relay', level: config.logLevel });
  const server = await startHttpServer(buildApp({ config, logger }), {
    host: config.host,
    port: config.port,
    logger,
  });
  const missing = missingSettings(config);
  if (missing.length > 0) logger.warn({ missing }, 'not ready until these variables are set');
  installShutdown({ logger, steps: [{ name: 'http server', close: () => server.close() }] });
});
