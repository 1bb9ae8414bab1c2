import { ApiError } from '@svc/contracts';
import type { Logger } from '@svc/service-kit';
import { describeError, within } from '../../domain/call-policy';
import type { RetryPolicy } from '../../domain/call-policy';
import type { HubAgent, PlatformApi } from '../../data/platform-api';

export interface AgentLifecycleDeps {
  api: Pick<PlatformApi, 'getSelf'>;
  logger: Logger;
  policy: RetryPolicy;
  /** Values that must never reach a log line (the agent token). */
  secrets: string[];
  hub: {
    send(): Promise<void>;
    startPeriodic(everyMs: number): void;
    stopPeriodic(): void;
    idle(): Promise<void>;
  };
  stages: {
    startHeldHeartbeats(): void;
    stopHeldHeartbeats(): void;
    settleInFlight(timeoutMs: number): Promise<void>;
  };
  /** The provider runtime: settled after the identity check, before any work; stopped first at stop. */
  provider?: {
    prepare(self: HubAgent | undefined, signal: AbortSignal): Promise<void>;
    stop(): Promise<void>;
  };
  /** Runs the poll loop until `signal` aborts. */
  pollLoop: (signal: AbortSignal) => Promise<void>;
  /** Aborted at the very end of stop(): cancels a hub heartbeat still in flight. */
  lifetime: AbortController;
  hubHeartbeatMs: number;
  stopTimeoutMs: number;
  /** Reported in the start log line. */
  concurrency: number;
  pollWaitSeconds: number;
}

/**
 * Start and stop of the agent, each done once. Start confirms the token with the hub, settles the provider
 * runtime (its model and credential refreshes; a stale model rejects the start), sends the first hub
 * heartbeat, starts the periodic heartbeats and the poll loop. Stop ends the poll loop and the credential
 * refreshes at once, waits for (then abandons) the stages in flight, stops the timers and cancels a hub
 * heartbeat still in flight.
 */
export class AgentLifecycle {
  /** Aborted by stop(): ends the poll loop and any pending long poll. */
  private readonly loopController = new AbortController();
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly deps: AgentLifecycleDeps) {}

  start(): Promise<void> {
    if (this.stopping) return Promise.reject(new Error('the agent was stopped'));
    this.starting ??= this.doStart();
    return this.starting;
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStart(): Promise<void> {
    const { api, logger, policy, secrets, hub, stages } = this.deps;
    const signal = this.loopController.signal;
    let self: HubAgent | undefined;
    try {
      self = await within(signal, policy.requestTimeoutMs, (s) => api.getSelf(s));
      logger.info(
        { agent_id: self.id, name: self.name, status: self.status, capabilities: self.capabilities },
        'agent identity confirmed by the hub',
      );
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        throw new Error(`the hub refused AGENT_TOKEN (${error.status} ${error.code})`, { cause: error });
      }
      logger.warn({ error: describeError(error, secrets) }, 'agent identity not confirmed yet; continuing');
    }
    if (signal.aborted) return;
    try {
      await this.deps.provider?.prepare(self, signal);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    if (signal.aborted) return;
    await hub.send();
    hub.startPeriodic(this.deps.hubHeartbeatMs);
    stages.startHeldHeartbeats();
    this.loop = this.deps.pollLoop(signal).catch((error: unknown) => {
      logger.error({ error: describeError(error, secrets) }, 'poll loop ended unexpectedly');
    });
    logger.info(
      { concurrency: this.deps.concurrency, poll_wait_seconds: this.deps.pollWaitSeconds },
      'reference agent started',
    );
  }

  private async doStop(): Promise<void> {
    const { logger, hub, stages } = this.deps;
    const began = Date.now();
    this.loopController.abort(new Error('the agent is stopping'));
    await this.deps.provider?.stop();
    await this.starting?.catch(() => undefined);
    await this.loop;
    await stages.settleInFlight(this.deps.stopTimeoutMs);
    hub.stopPeriodic();
    stages.stopHeldHeartbeats();
    this.deps.lifetime.abort(new Error('the agent stopped'));
    await hub.idle();
    logger.info({ duration_ms: Date.now() - began }, 'reference agent stopped');
  }
}
