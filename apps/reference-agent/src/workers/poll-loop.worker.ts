import type { Logger } from '@svc/service-kit';
import { backoffDelay, describeError, sleep, within } from '../domain/call-policy';
import type { RetryPolicy } from '../domain/call-policy';
import type { PlatformApi } from '../data/platform-api';
import type { AgentStageAssignment } from '../domain/stage-handler';
import type { Wakeup } from '../domain/wakeup';

/** Slack added to the long-poll wait before the request itself is given up as hung. */
const LONG_POLL_SLACK_MS = 15_000;

export interface PollLoopDeps {
  api: Pick<PlatformApi, 'listStages' | 'claimNext'>;
  /** Where answers go; it says how many slots are free, whether a stage is held, and how many an answer started. */
  stages: {
    isFull(): boolean;
    freeSlots(): number;
    holdsHeld(): boolean;
    reconcile(stages: AgentStageAssignment[], listedAt: number, options?: { claimed?: boolean }): number;
  };
  /** Notified when a stage settles, so a full or idle loop polls again at once. */
  wakeup: Wakeup;
  logger: Logger;
  policy: RetryPolicy;
  /** Values that must never reach a log line (the agent token). */
  secrets: string[];
  /** Long-poll wait when nothing is open, in seconds. */
  pollWaitSeconds: number;
  /** Pause between polls while every open stage is already being worked or held. */
  idlePollMs: number;
}

/**
 * Long-polls the agent's stages and hands each answer to the tracker until `signal` aborts. Mostly it asks
 * for its next assigned stages claimed (claim-next, up to its free slots): one round trip from assignment to
 * a claimed stage, and a wait that only ends on a new assignment. It lists its open stages instead on its
 * first poll (stages it held before a restart, blocked ones included), while it holds a blocked stage (only a
 * listing shows it resumed or taken away) and after a failed claim-next (whose stages may be claimed though
 * the answer was lost). A failed call is retried with capped backoff; the loop never ends on its own.
 */
export async function runPollLoop(deps: PollLoopDeps, signal: AbortSignal): Promise<void> {
  const { api, stages: tracker, wakeup, logger, policy, secrets, pollWaitSeconds, idlePollMs } = deps;
  let failures = 0;
  let listNext = true;
  while (!signal.aborted) {
    if (tracker.isFull()) {
      await wakeup.wait(idlePollMs, signal);
      continue;
    }
    const listing = listNext || tracker.holdsHeld();
    const listedAt = Date.now();
    let stages: AgentStageAssignment[];
    try {
      stages = await within(signal, pollWaitSeconds * 1000 + LONG_POLL_SLACK_MS, (s) =>
        listing
          ? api.listStages(pollWaitSeconds, s)
          : api.claimNext(pollWaitSeconds, Math.max(1, tracker.freeSlots()), s),
      );
      failures = 0;
    } catch (error) {
      if (signal.aborted) break;
      failures += 1;
      if (!listing) listNext = true;
      const delayMs = backoffDelay(failures, policy);
      logger.warn(
        { attempt: failures, retry_in_ms: delayMs, error: describeError(error, secrets) },
        listing ? 'listing stages failed; retrying' : 'claiming stages failed; retrying',
      );
      await sleep(delayMs, signal).catch(() => undefined);
      continue;
    }
    if (listing) listNext = false;
    const started = tracker.reconcile(stages, listedAt, listing ? {} : { claimed: true });
    // The list answers at once while any stage is open, ours in progress included: pause rather than spin.
    const quick = Date.now() - listedAt < idlePollMs;
    if (started === 0 && (stages.length > 0 || quick)) await wakeup.wait(idlePollMs, signal);
  }
}
