import { createLogger, installShutdown, runMain, startHttpServer } from '@svc/service-kit';
import { createControlWebService } from './app';
import { loadControlWebConfig } from './env';

runMain('control-web', async () => {
  const config = loadControlWebConfig();
  const logger = createLogger({ name: 'control-web', level: config.logLevel });
  const { app } = createControlWebService({ config, logger });
  const server = await startHttpServer(app, { host: config.host, port: config.port, logger });
  installShutdown({ logger, steps: [{ name: 'http server', close: () => server.close() }] });
});
