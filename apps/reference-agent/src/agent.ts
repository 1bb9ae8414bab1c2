import { ApiError } from '@svc/contracts';
import type { Logger } from '@svc/service-kit';
import { backoffDelay, DEFAULT_RETRY_POLICY, describeError, sleep, within } from './call-policy';
import type { RetryPolicy } from './call-policy';
import { defaultStageHandler } from './default-handler';
import { createPlatformApi } from './stage-api';
import type { PlatformApi } from './stage-api';
import type { AgentStageAssignment, StageHandler } from './stage-handler';
import { runStage } from './stage-runner';
import type { StageOutcome } from './stage-runner';

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
  /** A fetch implementation for both clients (defaults to the global one). */
  fetch?: (input: Request) => Promise<Response>;
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
}

/** How often held (blocked) stages are checked for a due heartbeat (each at its own interval). */
const HELD_HEARTBEAT_MS = 1_000;

interface TrackedStage {
  stage: AgentStageAssignment;
  status: 'working' | 'held';
  controller: AbortController;
  done: Promise<void>;
  /** When the stage became held; listings started before it do not speak for it. */
  heldAt: number;
  /** When a held stage is tried again (a StageBlockedError with `retryAfterSeconds`). */
  retryAt: number | undefined;
  /** The last heartbeat sent for the stage while held. */
  heldBeatAt?: number;
  /** The platform has the blocker, so a listing showing the stage not blocked means someone resumed it. */
  blockerReported: boolean;
}

/** A wake-up call for the poll loop: a stage finished, a slot opened, or the agent is stopping. */
class Wakeup {
  private waiters: (() => void)[] = [];

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves after `ms`, on `notify()`, or when `signal` aborts (never rejects). */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((waiter) => waiter !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.push(done);
    });
  }
}

/** Slack added to the long-poll wait before the request itself is given up as hung. */
const LONG_POLL_SLACK_MS = 15_000;
/** After giving up on stages at stop, how long their runners get to notice. */
const ABANDON_GRACE_MS = 1_000;

/**
 * A real agent process for the Workflow API: it long-polls the stages it owns, works up to `concurrency` of
 * them at once (claim → stage heartbeats → handler → `stage.result` evidence → artifact on the final stage →
 * complete), reports handler failures as blockers, drops stages that are not its own any more, and keeps
 * the hub informed with `idle`/`busy` heartbeats. Network failures and 5xx are retried with capped backoff;
 * the loop never dies until `stop()`.
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
  const api: PlatformApi = createPlatformApi({
    token: options.token,
    hubUrl: options.hubUrl,
    workflowUrl: options.workflowUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  const tracked = new Map<string, TrackedStage>();
  const cooldowns = new Map<string, number>();
  const wakeup = new Wakeup();
  /** Aborted by stop(): ends the poll loop and any pending long poll. */
  const loopController = new AbortController();
  /** Aborted at the very end of stop(): cancels a hub heartbeat still in flight. */
  const lifetime = new AbortController();

  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  let loop: Promise<void> | undefined;
  let hubTimer: NodeJS.Timeout | undefined;
  let heldTimer: NodeJS.Timeout | undefined;

  const working = () => [...tracked.values()].filter((t) => t.status === 'working');

  // ---------------------------------------------------------------------------------------- hub status
  let hubSending: Promise<void> | undefined;
  let hubResend = false;
  let hubReported: 'idle' | 'busy' | undefined;

  const hubStatus = (): 'idle' | 'busy' => (working().length > 0 ? 'busy' : 'idle');

  /** Sends one hub heartbeat with the current status; calls made while one is in flight coalesce. */
  function sendHubHeartbeat(): Promise<void> {
    if (hubSending) {
      hubResend = true;
      return hubSending;
    }
    const status = hubStatus();
    hubSending = within(lifetime.signal, policy.requestTimeoutMs, (s) => api.hubHeartbeat(status, s))
      .then(
        () => {
          if (hubReported !== status) logger.info({ status }, 'hub heartbeat: status reported');
          hubReported = status;
        },
        (error: unknown) => {
          if (lifetime.signal.aborted) return;
          logger.warn({ status, error: describeError(error, secrets) }, 'hub heartbeat failed');
        },
      )
      .finally(() => {
        hubSending = undefined;
        if (hubResend && !lifetime.signal.aborted) {
          hubResend = false;
          void sendHubHeartbeat();
        }
      });
    return hubSending;
  }

  /**
   * A held (blocked) stage is still ours: its owner is alive and waiting, so it keeps heartbeating and the
   * engine does not take it away as stalled. A "not yours any more" answer forgets it.
   */
  async function beatHeldStages(): Promise<void> {
    for (const [id, entry] of tracked) {
      if (entry.status !== 'held' || lifetime.signal.aborted) continue;
      const everyMs = Math.max(1, entry.stage.heartbeat_interval_seconds || 15) * 1000;
      if (Date.now() - Math.max(entry.heldAt, entry.heldBeatAt ?? 0) < everyMs) continue;
      entry.heldBeatAt = Date.now();
      try {
        await within(lifetime.signal, policy.requestTimeoutMs, (s) =>
          api.heartbeat(id, 'blocked; waiting for the blocker to be resolved', s),
        );
      } catch (error) {
        if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429) {
          if (tracked.get(id) === entry) tracked.delete(id);
          logger.info({ stage_id: id, code: error.code }, 'held stage is no longer ours; forgetting it');
        }
      }
    }
  }

  /** Reports a status change (idle ↔ busy) at once rather than at the next period. */
  function statusChanged(): void {
    if (!lifetime.signal.aborted && hubStatus() !== hubReported) void sendHubHeartbeat();
  }

  // -------------------------------------------------------------------------------------------- stages
  function startStage(stage: AgentStageAssignment): void {
    const controller = new AbortController();
    const entry: TrackedStage = {
      stage,
      status: 'working',
      controller,
      done: Promise.resolve(),
      heldAt: 0,
      retryAt: undefined,
      blockerReported: false,
    };
    tracked.set(stage.stage_id, entry);
    statusChanged();
    entry.done = runStage(stage, controller.signal, { api, handler, logger, policy, secrets })
      .then((outcome: StageOutcome) => {
        if (outcome.kind === 'held') {
          entry.status = 'held';
          entry.heldAt = Date.now();
          entry.retryAt = outcome.retryAfterMs === undefined ? undefined : Date.now() + outcome.retryAfterMs;
          entry.blockerReported = outcome.blockerReported;
          return;
        }
        if (tracked.get(stage.stage_id) === entry) tracked.delete(stage.stage_id);
        if (outcome.kind === 'dropped') cooldowns.set(stage.stage_id, Date.now() + dropCooldownMs);
      })
      .catch((error: unknown) => {
        // runStage never throws; this guards the loop against a programming error all the same.
        tracked.delete(stage.stage_id);
        logger.error(
          { stage_id: stage.stage_id, error: describeError(error, secrets) },
          'stage runner failed',
        );
      })
      .finally(() => {
        statusChanged();
        wakeup.notify();
      });
  }

  /** Starts the listed stages that are new (or due again) within the free slots; returns how many. */
  function reconcile(stages: AgentStageAssignment[], listedAt: number): number {
    const now = Date.now();
    const listed = new Set(stages.map((stage) => stage.stage_id));
    for (const [id, entry] of tracked) {
      if (entry.status === 'held' && !listed.has(id) && listedAt >= entry.heldAt) {
        tracked.delete(id);
        logger.info(
          { stage_id: id, invocation_id: entry.stage.invocation_id },
          'held stage is no longer ours; forgetting it',
        );
      }
    }
    for (const [id, until] of cooldowns) if (until <= now) cooldowns.delete(id);

    let started = 0;
    for (const stage of stages) {
      if (working().length >= concurrency) break;
      if (cooldowns.has(stage.stage_id)) continue;
      const entry = tracked.get(stage.stage_id);
      if (entry?.status === 'working') continue;
      if (entry?.status === 'held') {
        entry.stage = stage;
        const resumed = entry.blockerReported && stage.state !== 'blocked' && listedAt >= entry.heldAt;
        const due = entry.retryAt !== undefined && now >= entry.retryAt;
        if (!resumed && !due) continue;
      }
      startStage(stage);
      started += 1;
    }
    return started;
  }

  async function runLoop(): Promise<void> {
    const signal = loopController.signal;
    let failures = 0;
    while (!signal.aborted) {
      if (working().length >= concurrency) {
        await wakeup.wait(idlePollMs, signal);
        continue;
      }
      const listedAt = Date.now();
      let stages: AgentStageAssignment[];
      try {
        stages = await within(signal, pollWaitSeconds * 1000 + LONG_POLL_SLACK_MS, (s) =>
          api.listStages(pollWaitSeconds, s),
        );
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        failures += 1;
        const delayMs = backoffDelay(failures, policy);
        logger.warn(
          { attempt: failures, retry_in_ms: delayMs, error: describeError(error, secrets) },
          'listing stages failed; retrying',
        );
        await sleep(delayMs, signal).catch(() => undefined);
        continue;
      }
      const started = reconcile(stages, listedAt);
      // The list answers at once while any stage is open, ours in progress included: pause rather than spin.
      const quick = Date.now() - listedAt < idlePollMs;
      if (started === 0 && (stages.length > 0 || quick)) await wakeup.wait(idlePollMs, signal);
    }
  }

  // ------------------------------------------------------------------------------------------ lifecycle
  async function doStart(): Promise<void> {
    try {
      const self = await within(loopController.signal, policy.requestTimeoutMs, (s) => api.getSelf(s));
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
    if (loopController.signal.aborted) return;
    await sendHubHeartbeat();
    hubTimer = setInterval(() => void sendHubHeartbeat(), hubHeartbeatMs);
    heldTimer = setInterval(() => void beatHeldStages(), HELD_HEARTBEAT_MS);
    loop = runLoop().catch((error: unknown) => {
      logger.error({ error: describeError(error, secrets) }, 'poll loop ended unexpectedly');
    });
    logger.info({ concurrency, poll_wait_seconds: pollWaitSeconds }, 'reference agent started');
  }

  async function doStop(): Promise<void> {
    const began = Date.now();
    loopController.abort(new Error('the agent is stopping'));
    await starting?.catch(() => undefined);
    await loop;
    const inFlight = working();
    if (inFlight.length > 0) {
      logger.info({ stages: inFlight.length, timeout_ms: stopTimeoutMs }, 'waiting for in-flight stages');
      const all = Promise.all(inFlight.map((entry) => entry.done));
      const settled = await Promise.race([all.then(() => true), delay(stopTimeoutMs).then(() => false)]);
      if (!settled) {
        for (const entry of working()) entry.controller.abort(new Error('the agent is stopping'));
        await Promise.race([all, delay(ABANDON_GRACE_MS)]);
      }
    }
    if (hubTimer) clearInterval(hubTimer);
    if (heldTimer) clearInterval(heldTimer);
    lifetime.abort(new Error('the agent stopped'));
    await hubSending;
    logger.info({ duration_ms: Date.now() - began }, 'reference agent stopped');
  }

  return {
    start() {
      if (stopping) return Promise.reject(new Error('the agent was stopped'));
      starting ??= doStart();
      return starting;
    },
    stop() {
      stopping ??= doStop();
      return stopping;
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
