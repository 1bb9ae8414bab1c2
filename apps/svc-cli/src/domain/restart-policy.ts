/**
 * The supervisor's restart rules, pure: which exits restart a process, how long to wait before the next start,
 * and when to give up. Shared by supervised agents (which may end `failed`) and the runtime's own relay and
 * console router (which are restarted for as long as the runtime runs).
 */
export type RestartPolicy = 'always' | 'on-failure' | 'never';

export const RESTART_TIMINGS = {
  /** First back-off; each further quick failure doubles it. */
  initialDelayMs: 1_000,
  maxDelayMs: 60_000,
  /** Failures are counted within this window. */
  failureWindowMs: 60_000,
  /** This many failures within the window mark an agent `failed`. */
  maxFailuresInWindow: 5,
  /** A process that ran at least this long starts the back-off again from the first step. */
  healthyRunMs: 60_000,
} as const;

/** Exit code of an agent whose remembered provider model is gone from the catalog (ProviderModelNotFoundError). */
export const STALE_MODEL_EXIT_CODE = 78;

export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

/** A non-zero exit or a death by signal. */
export function isFailure(exit: ProcessExit): boolean {
  return exit.signal !== null || (exit.code !== null && exit.code !== 0);
}

/** Whether the policy asks for another start after this exit (a stop the supervisor asked for never does). */
export function wantsRestart(policy: RestartPolicy, exit: ProcessExit): boolean {
  if (policy === 'never') return false;
  if (policy === 'always') return true;
  return isFailure(exit);
}

export interface FailureHistory {
  /** When recent failures happened (ms since epoch), oldest first. */
  failures: number[];
  /** Failures in a row, each after a run shorter than {@link RESTART_TIMINGS.healthyRunMs}. */
  consecutive: number;
}

export type RestartDecision =
  | { action: 'restart'; delayMs: number; history: FailureHistory }
  | { action: 'give-up'; history: FailureHistory };

/**
 * Records an exit after a run of `ranMs` at time `now` and decides: restart after a back-off (1 s, doubling, at
 * most 60 s), or give up when `canGiveUp` and five failures fell within 60 s. A clean exit under `always`
 * restarts after the first back-off step without counting as a failure.
 */
export function decideRestart(
  history: FailureHistory,
  exit: ProcessExit,
  ranMs: number,
  now: number,
  canGiveUp: boolean,
): RestartDecision {
  const t = RESTART_TIMINGS;
  const failures = history.failures.filter((at) => now - at < t.failureWindowMs);
  let consecutive = ranMs >= t.healthyRunMs ? 0 : history.consecutive;
  if (!isFailure(exit)) {
    return { action: 'restart', delayMs: t.initialDelayMs, history: { failures, consecutive: 0 } };
  }
  failures.push(now);
  consecutive += 1;
  const next = { failures, consecutive };
  if (canGiveUp && failures.length >= t.maxFailuresInWindow) return { action: 'give-up', history: next };
  const delayMs = Math.min(t.maxDelayMs, t.initialDelayMs * 2 ** Math.min(consecutive - 1, 16));
  return { action: 'restart', delayMs, history: next };
}
