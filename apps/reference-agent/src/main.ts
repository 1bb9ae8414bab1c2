import { createRemoteJwks, createTokenVerifier } from '@svc/auth';
import { createLogger, installShutdown, runMain } from '@svc/service-kit';
import { createReferenceAgent } from './app';
import { defaultStageHandler } from './domain/default-stage-handler';
import {
  EXIT_PROVIDER_MODEL_NOT_FOUND,
  ProviderModelNotFoundError,
  staleModelLogLine,
} from './domain/provider-model-not-found';
import { loadReferenceAgentConfig } from './env';
import { loadStageHandler } from './data/stage-handler-module';

/** How long SIGTERM waits for in-flight stages; below installShutdown's own 20 s deadline. */
const STOP_TIMEOUT_MS = 15_000;

runMain('reference-agent', async () => {
  const config = loadReferenceAgentConfig();
  const logger = createLogger({ name: 'reference-agent', level: config.logLevel });
  const handler = config.handlerPath ? loadStageHandler(config.handlerPath) : defaultStageHandler;
  /**
   * A stale provider/model (spec: `ProviderModelNotFoundError`): one log line, stop, exit 78, so the supervisor
   * clears only this agent's runtime home and restarts it.
   */
  let exiting = false;
  const exitForStaleModel = (error: ProviderModelNotFoundError) => {
    if (exiting) return;
    exiting = true;
    const line = staleModelLogLine(error);
    logger.error(line.fields, line.message);
    const bound = setTimeout(() => process.exit(EXIT_PROVIDER_MODEL_NOT_FOUND), STOP_TIMEOUT_MS + 2_000);
    void agent
      .stop()
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(bound);
        process.exit(EXIT_PROVIDER_MODEL_NOT_FOUND);
      });
  };
  const agent = createReferenceAgent({
    token: config.token,
    hubUrl: config.hubUrl,
    workflowUrl: config.workflowUrl,
    handler,
    logger,
    pollWaitSeconds: config.pollWaitSeconds,
    concurrency: config.concurrency,
    hubHeartbeatSeconds: config.hubHeartbeatSeconds,
    stopTimeoutMs: STOP_TIMEOUT_MS,
    runtime: config.runtime,
    onProviderModelNotFound: exitForStaleModel,
    answerAsks: true,
    ...(config.serve
      ? {
          console: {
            port: config.serve.port,
            workdir: config.serve.workdir,
            proxyKey: config.serve.proxyKey,
            tokens: createTokenVerifier({
              issuer: config.hubIssuer,
              getJwks: createRemoteJwks({ url: new URL('/.well-known/jwks.json', config.hubUrl).toString() }),
            }),
          },
        }
      : {}),
  });
  installShutdown({ logger, steps: [{ name: 'reference agent', close: () => agent.stop() }] });
  logger.info(
    {
      hub_url: config.hubUrl,
      workflow_url: config.workflowUrl,
      handler: config.handlerPath ?? 'default',
      serve_port: config.serve?.port ?? null,
      workdir: config.serve?.workdir ?? null,
      runtime_home: config.runtime.home ?? null,
      refreshes_runtime_credential: config.runtime.credential !== undefined,
    },
    'starting',
  );
  try {
    await agent.start();
  } catch (error) {
    if (error instanceof ProviderModelNotFoundError) {
      exitForStaleModel(error);
      return;
    }
    throw error;
  }
});
