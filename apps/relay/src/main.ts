import {
  createLogger,
  installShutdown,
  runMain,
  serializedReload,
  startHttpServer,
  startOptionalMetricsListener,
  startTracing,
} from '@svc/service-kit';
import { createRelayService } from './app';
import { loadRelayConfig } from './env';
import { relayRegistry } from './metrics';

// SIGHUP re-reads the workspace API key file (a rotated runtime key is taken without a restart, so spawns in
// flight go on); until the relay is built, a SIGHUP is ignored (the file is read at start anyway).
let onHangup: () => void = () => undefined;
process.on('SIGHUP', () => onHangup());

runMain('relay', async () => {
  const config = loadRelayConfig();
  const logger = createLogger({ name: 'relay', level: config.logLevel });
  const tracing = startTracing({ serviceName: 'relay', logger });
  const relay = createRelayService({ config, logger });
  const server = await startHttpServer(relay.app, { host: config.host, port: config.port, logger });
  const metricsSteps = await startOptionalMetricsListener(relayRegistry, {
    host: config.host,
    port: config.metricsPort,
    logger,
  });
  onHangup = serializedReload(() => relay.reloadKey());
  const missing = relay.missingSettings();
  if (missing.length > 0) logger.warn({ missing }, 'not ready until these variables are set');
  installShutdown({
    logger,
    steps: [
      { name: 'http server', close: () => server.close() },
      ...metricsSteps,
      // A spawn still starting is stopped with the relay (its outcome is `spawn_interrupted` after a restart).
      { name: 'spawns in flight', close: () => relay.spawner.stopInFlight() },
      { name: 'hub reports', close: () => relay.eventsFlushed() },
      { name: 'traces', close: () => tracing.shutdown() },
    ],
  });
});
