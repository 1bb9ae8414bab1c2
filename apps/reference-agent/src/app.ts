import { createAgentConsole } from '@svc/agent-console';
import type { TokenVerifier } from '@svc/auth';
import type { Logger, RunningServer } from '@svc/service-kit';
import { HubPresence } from './use-cases/presence/keep-hub-presence';
import { AgentLifecycle } from './use-cases/lifecycle/run-agent-lifecycle';
import { runPollLoop } from './workers/poll-loop.worker';
import { InboxResponder } from './use-cases/inbox/answer-inbox';
import { ProviderRuntime } from './use-cases/runtime/keep-provider-runtime';
import type { HeldRuntimeCredential } from './use-cases/runtime/keep-provider-runtime';
import { RuntimeHome } from './data/runtime-home';
import { StageTracker } from './use-cases/stages/track-stages';
import { Wakeup } from './domain/wakeup';
import { DEFAULT_RETRY_POLICY } from './domain/call-policy';
import type { RetryPolicy } from './domain/call-policy';
import { defaultStageHandler } from './domain/default-stage-handler';
import { agentIdentityFromToken } from './domain/agent-identity';
import { consoleChatReply } from './domain/console-chat';
import { staleModelLogLine } from './domain/provider-model-not-found';
import type { ProviderModelNotFoundError } from './domain/provider-model-not-found';
import { createPlatformApi } from './data/platform-api';
import type { StageHandler } from './domain/stage-handler';
import { nodeFetch } from '@svc/service-kit/node-fetch';

export interface ReferenceAgentOptions {
  /** The agent's `AGENT_TOKEN`; sent as `Authorization: Bearer`, never logged. */
  token: string;
  hubUrl: string;
  workflowUrl: string;
  /** Does the work of a stage (default: `defaultStageHandler`). */
  handler?: StageHandler;
  logger: Logger;
  /** Long-poll wait when nothing is open, in seconds (0–30, default 20). */
  pollWaitSeconds?: number;
  /** Stages worked at once (default 4). */
  concurrency?: number;
  /** Hub heartbeat period in seconds (default 15; the hub's roster wants one within 90 s). */
  hubHeartbeatSeconds?: number;
  /** Pause between polls while every open stage is already being worked or held (default 3 s). */
  idlePollMs?: number;
  /** How long `stop()` waits for in-flight stages before giving up on them (default 10 s). */
  stopTimeoutMs?: number;
  /** How long a stage that answered "not yours" is ignored if it is still listed (default 30 s). */
  dropCooldownMs?: number;
  /** Backoff and request timeouts (defaults: 500 ms doubling to 30 s; 30 s per request). */
  retry?: Partial<RetryPolicy>;
  /** A fetch implementation for both clients (defaults to `nodeFetch`, on Node's HTTP client). */
  fetch?: (input: Request) => Promise<Response>;
  /** Answer `ask` messages of the agent's inbox (`InboxResponder`) while running (default false). */
  answerAsks?: boolean;
  /** Serve the agent's console (health, chat, terminal) while running; omitted, nothing listens. */
  console?: ReferenceAgentConsoleOptions;
  /** The provider runtime: a runtime credential to keep fresh and a runtime home to keep the model in. */
  runtime?: ReferenceAgentRuntimeOptions;
  /**
   * Called once when the hub refuses the runtime's model on a credential refresh. Default: the error is logged
   * (one line naming `ProviderModelNotFoundError`) and the agent stops. A process should then exit with
   * `EXIT_PROVIDER_MODEL_NOT_FOUND` (78). A stale model found at start rejects `start()` instead.
   */
  onProviderModelNotFound?: (error: ProviderModelNotFoundError) => void;
}

export interface ReferenceAgentRuntimeOptions {
  /** The runtime credential the hub issued at start; refreshed at two thirds of its life. Never logged. */
  credential?: { token: string; expiresAt: Date } | undefined;
  /** An owner-only directory for `runtime-state.json` (the model the runtime uses). */
  home?: string | undefined;
}

export interface ReferenceAgentConsoleOptions {
  /** 0 = any free port (the bound one is logged and returned by `consoleUrl()`). */
  port: number;
  /** Default 127.0.0.1: the host's console router is the way in from outside. */
  host?: string;
  /** The terminal's working directory. */
  workdir: string;
  /** The key the host's console router proves itself with. */
  proxyKey?: string | undefined;
  /** Verifies console tickets and agent tokens (the hub's JWKS). */
  tokens: TokenVerifier;
  /** The terminal's shell (default `$SHELL`, else `/bin/sh`). */
  shell?: string;
}

export interface ReferenceAgent {
  /**
   * Checks the token with the hub, sends the first hub heartbeat (`idle`) and starts the poll loop; resolves
   * once running. Rejects only when the hub refuses the token (401); an unreachable platform is retried.
   */
  start(): Promise<void>;
  /**
   * Ends the poll loop at once (the pending long poll is aborted), waits for in-flight stages up to
   * `stopTimeoutMs`, abandons the rest and resolves. The hub status is left as it is.
   */
  stop(): Promise<void>;
  /** Where the console listens once started (`http://127.0.0.1:<port>`), or undefined when not serving. */
  consoleUrl(): string | undefined;
  /** The newest runtime credential, when the agent was given one. */
  runtimeCredential(): HeldRuntimeCredential | undefined;
  /** The `provider/model` the runtime uses, once started (null when none is known). */
  runtimeModel(): string | null;
}

/**
 * A real agent process for the Workflow API: it long-polls the stages it owns, works up to `concurrency` of
 * them at once (claim → stage heartbeats → handler → `stage.result` evidence → artifact on the final stage →
 * complete), reports handler failures as blockers, drops stages that are not its own any more, and keeps
 * the hub informed with `idle`/`busy` heartbeats. Network failures and 5xx are retried with capped backoff;
 * the loop never dies until `stop()`.
 *
 * This function only settles the options and wires the parts, each owning its own state:
 * `HubPresence` (hub heartbeats), `StageTracker` (stages worked or held, cooldowns), `runPollLoop` (the
 * long poll), `ProviderRuntime` (the runtime's model, runtime home and credential refreshes) and
 * `AgentLifecycle` (start and stop). With `console`, the agent also serves its console
 * (`@svc/agent-console`: health, chat answered by `consoleChatReply`, a terminal in the workdir) from start
 * to stop; its status is the tracker's idle/busy.
 */
export function createReferenceAgent(options: ReferenceAgentOptions): ReferenceAgent {
  const logger = options.logger;
  const handler = options.handler ?? defaultStageHandler;
  const pollWaitSeconds = Math.min(30, Math.max(0, Math.floor(options.pollWaitSeconds ?? 20)));
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 16));
  const hubHeartbeatMs = Math.max(1, options.hubHeartbeatSeconds ?? 15) * 1000;
  const idlePollMs = Math.max(10, options.idlePollMs ?? 3_000);
  const stopTimeoutMs = Math.max(0, options.stopTimeoutMs ?? 10_000);
  const dropCooldownMs = Math.max(0, options.dropCooldownMs ?? 30_000);
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...(options.retry ?? {}) };
  const secrets = [options.token];
  // Node's own HTTP client unless told otherwise: half the CPU of the global fetch per call (see `nodeFetch`).
  const fetch = options.fetch ?? nodeFetch();
  const api = createPlatformApi({
    token: options.token,
    hubUrl: options.hubUrl,
    workflowUrl: options.workflowUrl,
    fetch,
  });

  /** Aborted at the very end of stop(): cancels a hub heartbeat still in flight. */
  const lifetime = new AbortController();
  const wakeup = new Wakeup();
  const hub: HubPresence = new HubPresence({
    api,
    logger,
    policy,
    secrets,
    lifetime: lifetime.signal,
    status: () => status(),
  });
  const stages: StageTracker = new StageTracker({
    api,
    handler,
    logger,
    policy,
    secrets,
    concurrency,
    dropCooldownMs,
    lifetime: lifetime.signal,
    onWorkingChanged: () => hub.statusChanged(),
    onSettled: () => wakeup.notify(),
  });
  const pollLoop = (signal: AbortSignal) =>
    runPollLoop({ api, stages, wakeup, logger, policy, secrets, pollWaitSeconds, idlePollMs }, signal);

  const provider = new ProviderRuntime({
    api,
    logger,
    policy,
    secrets,
    credential: options.runtime?.credential,
    home: options.runtime?.home ? new RuntimeHome(options.runtime.home) : undefined,
    onProviderModelNotFound: (error) => {
      if (options.onProviderModelNotFound) {
        options.onProviderModelNotFound(error);
        return;
      }
      const line = staleModelLogLine(error);
      logger.error(line.fields, line.message);
      void stopOnce();
    },
  });

  const status = (): 'busy' | 'idle' => (stages.workingCount() > 0 ? 'busy' : 'idle');
  const agentConsole = options.console ? buildConsole(options.console) : undefined;
  let consoleServer: RunningServer | undefined;

  function buildConsole(serve: ReferenceAgentConsoleOptions) {
    const identity = agentIdentityFromToken(options.token);
    return createAgentConsole({
      agentId: identity.agentId,
      agentName: identity.name,
      workspaceId: identity.workspaceId,
      tokens: serve.tokens,
      proxyKey: serve.proxyKey,
      workdir: serve.workdir,
      shell: serve.shell,
      status,
      startedAt: new Date(),
      chat: async (text) =>
        consoleChatReply(text, { ...identity, status: status(), stages: stages.inProgress() }),
      logger: logger.child({ component: 'console' }),
    });
  }

  const lifecycle = new AgentLifecycle({
    api,
    logger,
    policy,
    secrets,
    hub,
    stages,
    provider,
    pollLoop,
    lifetime,
    hubHeartbeatMs,
    stopTimeoutMs,
    concurrency,
    pollWaitSeconds,
  });
  const inbox = options.answerAsks
    ? new InboxResponder({
        token: options.token,
        hubUrl: options.hubUrl,
        agentId: agentIdentityFromToken(options.token).agentId,
        logger: logger.child({ component: 'inbox' }),
        fetch,
      })
    : undefined;
  let starting: Promise<void> | undefined;
  async function start(): Promise<void> {
    if (agentConsole && options.console) {
      consoleServer = await agentConsole.listen({
        host: options.console.host ?? '127.0.0.1',
        port: options.console.port,
      });
      logger.info({ url: consoleServer.url, port: consoleServer.port }, 'console serving');
    }
    try {
      await lifecycle.start();
      inbox?.start();
    } catch (error) {
      await consoleServer?.close(1_000);
      throw error;
    }
  }
  let stopping: Promise<void> | undefined;
  async function stop(): Promise<void> {
    const stopped = lifecycle.stop();
    // Stopping the lifecycle aborts a start still under way; the console is closed once it has settled.
    await starting?.catch(() => undefined);
    // Open terminals and streams end at once; stages get their own bound.
    await Promise.all([stopped, consoleServer?.close(5_000), inbox?.stop()]);
  }
  const stopOnce = () => (stopping ??= stop());
  // A plain object, so `start` and `stop` may be passed around unbound.
  return {
    start: () => (starting ??= start()),
    stop: stopOnce,
    consoleUrl: () => consoleServer?.url,
    runtimeCredential: () => provider.credential(),
    runtimeModel: () => provider.model(),
  };
}
