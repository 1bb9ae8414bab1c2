import { ApiError } from '@svc/contracts';
import type { Logger } from '@svc/service-kit';
import { describeError, within } from '../../domain/call-policy';
import type { RetryPolicy } from '../../domain/call-policy';
import type { PlatformApi } from '../../data/platform-api';
import type { AgentStageAssignment, StageHandler } from '../../domain/stage-handler';
import { runStage } from './run-stage';
import type { StageOutcome, StageRunnerDeps, StageRunOptions } from './run-stage';

/** How often held (blocked) stages are checked for a due heartbeat (each at its own interval). */
const HELD_HEARTBEAT_MS = 1_000;
/** After giving up on stages at stop, how long their runners get to notice. */
const ABANDON_GRACE_MS = 1_000;
/** How long a completed stage is remembered, so a listing answered from before its completion does not restart it. */
const COMPLETED_MEMORY_MS = 5 * 60_000;

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

export interface StageTrackerDeps {
  api: PlatformApi;
  handler: StageHandler;
  logger: Logger;
  policy: RetryPolicy;
  /** Values that must never reach a log line, a blocker reason or evidence (the agent token). */
  secrets: string[];
  /** Stages worked at once. */
  concurrency: number;
  /** How long a stage that answered "not yours" is ignored if it is still listed. */
  dropCooldownMs: number;
  /** The agent's lifetime: once aborted, held stages get no more heartbeats. */
  lifetime: AbortSignal;
  /** Called when a stage starts or settles, i.e. when the number of working stages may have changed. */
  onWorkingChanged: () => void;
  /** Called after a stage settled (a slot opened). */
  onSettled: () => void;
  /** Works one stage (default: `runStage`). */
  runStage?: (
    stage: AgentStageAssignment,
    signal: AbortSignal,
    deps: StageRunnerDeps,
    options?: StageRunOptions,
  ) => Promise<StageOutcome>;
}

/**
 * The stages the agent holds: those being worked (up to `concurrency`) and those held after a blocker. It
 * starts listed stages that are new or due again, forgets held stages that are no longer the agent's, keeps
 * held stages heartbeating, ignores dropped stages for a cooldown, and at stop waits for (then abandons)
 * the stages in flight.
 */
export class StageTracker {
  private readonly tracked = new Map<string, TrackedStage>();
  /**
   * Stages that answered "not yours", by id, with the assignment that was dropped: the same stage assigned to
   * this agent again (a new `assigned_at`, after the engine gave it back) is worked at once.
   */
  private readonly cooldowns = new Map<string, { until: number; assignedAt: string | null }>();
  /**
   * Stages this agent completed, by id, with when: a listing that started before that still shows them open
   * (it was read before the completion) and must not start them again; one that started after does (the stage
   * was given back to this agent).
   */
  private readonly completed = new Map<string, number>();
  private heldTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: StageTrackerDeps) {}

  /** How many stages are being worked now (held ones excluded). */
  workingCount(): number {
    return this.working().length;
  }

  /** The stages being worked now (held ones excluded), oldest first. */
  inProgress(): AgentStageAssignment[] {
    return this.working().map((entry) => entry.stage);
  }

  /** True when every slot is taken. */
  isFull(): boolean {
    return this.workingCount() >= this.deps.concurrency;
  }

  /** How many more stages can be worked now. */
  freeSlots(): number {
    return Math.max(0, this.deps.concurrency - this.workingCount());
  }

  /** True while a stage is held after a blocker: only a listing shows it resumed or taken away. */
  holdsHeld(): boolean {
    return [...this.tracked.values()].some((entry) => entry.status === 'held');
  }

  /**
   * Starts the listed stages that are new (or due again) within the free slots; returns how many. With
   * `claimed`, `stages` is what a claim-next answered (stages just claimed, not a listing of all the open ones):
   * they are started without claiming them again, and held stages are not forgotten for being absent.
   */
  reconcile(stages: AgentStageAssignment[], listedAt: number, options: StageRunOptions = {}): number {
    const { logger } = this.deps;
    const now = Date.now();
    const listed = new Set(stages.map((stage) => stage.stage_id));
    for (const [id, entry] of this.tracked) {
      if (options.claimed) break;
      if (entry.status === 'held' && !listed.has(id) && listedAt >= entry.heldAt) {
        this.tracked.delete(id);
        logger.info(
          { stage_id: id, invocation_id: entry.stage.invocation_id },
          'held stage is no longer ours; forgetting it',
        );
      }
    }
    for (const [id, { until }] of this.cooldowns) if (until <= now) this.cooldowns.delete(id);
    for (const [id, at] of this.completed) if (at + COMPLETED_MEMORY_MS <= now) this.completed.delete(id);

    let started = 0;
    const skipped: string[] = [];
    for (const stage of stages) {
      if (this.isFull()) {
        skipped.push(stage.stage_id);
        continue;
      }
      const completedAt = this.completed.get(stage.stage_id);
      if (completedAt !== undefined) {
        if (listedAt < completedAt) {
          skipped.push(stage.stage_id);
          continue;
        }
        this.completed.delete(stage.stage_id);
      }
      const dropped = this.cooldowns.get(stage.stage_id);
      if (dropped && dropped.assignedAt === stage.assigned_at) {
        skipped.push(stage.stage_id);
        continue;
      }
      if (dropped) this.cooldowns.delete(stage.stage_id);
      const entry = this.tracked.get(stage.stage_id);
      if (entry?.status === 'working') continue;
      // A stage claimed from `assigned` was given to this agent afresh: a held entry of it is stale.
      if (entry?.status === 'held' && !options.claimed) {
        entry.stage = stage;
        const resumed = entry.blockerReported && stage.state !== 'blocked' && listedAt >= entry.heldAt;
        const due = entry.retryAt !== undefined && now >= entry.retryAt;
        if (!resumed && !due) continue;
      }
      this.start(stage, options);
      started += 1;
    }
    if (options.claimed && skipped.length > 0) {
      // Claimed but not worked: the engine stalls and reassigns them, or the next listing after a restart shows them.
      logger.warn({ stage_ids: skipped }, 'claimed stages not started');
    }
    return started;
  }

  /** Checks held stages for a due heartbeat every second until `stopHeldHeartbeats()`. */
  startHeldHeartbeats(): void {
    this.heldTimer = setInterval(() => void this.beatHeldStages(), HELD_HEARTBEAT_MS);
  }

  stopHeldHeartbeats(): void {
    if (this.heldTimer) clearInterval(this.heldTimer);
  }

  /**
   * A held (blocked) stage is still ours: its owner is alive and waiting, so it keeps heartbeating and the
   * engine does not take it away as stalled. A "not yours any more" answer forgets it.
   */
  async beatHeldStages(): Promise<void> {
    const { api, logger, policy, lifetime } = this.deps;
    for (const [id, entry] of this.tracked) {
      if (entry.status !== 'held' || lifetime.aborted) continue;
      const everyMs = Math.max(1, entry.stage.heartbeat_interval_seconds || 15) * 1000;
      if (Date.now() - Math.max(entry.heldAt, entry.heldBeatAt ?? 0) < everyMs) continue;
      entry.heldBeatAt = Date.now();
      try {
        await within(lifetime, policy.requestTimeoutMs, (s) =>
          api.heartbeat(id, 'blocked; waiting for the blocker to be resolved', s),
        );
      } catch (error) {
        if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429) {
          if (this.tracked.get(id) === entry) this.tracked.delete(id);
          logger.info({ stage_id: id, code: error.code }, 'held stage is no longer ours; forgetting it');
        }
      }
    }
  }

  /**
   * Waits up to `timeoutMs` for the stages being worked; then aborts their handlers and gives them a short
   * grace to notice. Held stages are left alone (the engine stalls and reassigns them).
   */
  async settleInFlight(timeoutMs: number): Promise<void> {
    const inFlight = this.working();
    if (inFlight.length === 0) return;
    this.deps.logger.info({ stages: inFlight.length, timeout_ms: timeoutMs }, 'waiting for in-flight stages');
    const all = Promise.all(inFlight.map((entry) => entry.done));
    const settled = await Promise.race([all.then(() => true), delay(timeoutMs).then(() => false)]);
    if (!settled) {
      for (const entry of this.working()) entry.controller.abort(new Error('the agent is stopping'));
      await Promise.race([all, delay(ABANDON_GRACE_MS)]);
    }
  }

  private working(): TrackedStage[] {
    return [...this.tracked.values()].filter((t) => t.status === 'working');
  }

  private start(stage: AgentStageAssignment, options: StageRunOptions = {}): void {
    const { api, handler, logger, policy, secrets } = this.deps;
    const run = this.deps.runStage ?? runStage;
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
    this.tracked.set(stage.stage_id, entry);
    this.deps.onWorkingChanged();
    entry.done = run(stage, controller.signal, { api, handler, logger, policy, secrets }, options)
      .then((outcome: StageOutcome) => {
        if (outcome.kind === 'held') {
          entry.status = 'held';
          entry.heldAt = Date.now();
          entry.retryAt = outcome.retryAfterMs === undefined ? undefined : Date.now() + outcome.retryAfterMs;
          entry.blockerReported = outcome.blockerReported;
          return;
        }
        if (this.tracked.get(stage.stage_id) === entry) this.tracked.delete(stage.stage_id);
        if (outcome.kind === 'completed') this.completed.set(stage.stage_id, Date.now());
        if (outcome.kind === 'dropped')
          this.cooldowns.set(stage.stage_id, {
            until: Date.now() + this.deps.dropCooldownMs,
            assignedAt: stage.assigned_at,
          });
      })
      .catch((error: unknown) => {
        // runStage never throws; this guards the loop against a programming error all the same.
        this.tracked.delete(stage.stage_id);
        logger.error(
          { stage_id: stage.stage_id, error: describeError(error, secrets) },
          'stage runner failed',
        );
      })
      .finally(() => {
        this.deps.onWorkingChanged();
        this.deps.onSettled();
      });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
