/** Timing of the run engine; every value comes from the environment (see env.ts) so tests can shorten it. */
export interface EngineSettings {
  /** A stage owner silent this long is stalled and the stage reassigned. */
  stallAfterMs: number;
  /** How often the sweeper runs (worker process). */
  sweepIntervalMs: number;
  /** An outbox row not processed this long after its last enqueue is enqueued again. */
  outboxRedeliverMs: number;
  /** A launching or running invocation untouched this long is reconciled again. */
  recheckMs: number;
  /**
   * How old a project's roster the reconcile may plan with (ms; 0 asks the hub every time): kept in the process,
   * dropped at once by the hub's roster notice (decision 105).
   */
  rosterMaxAgeMs: number;
  /**
   * How long a replica trusts its compiled contracts before it re-checks their stamp (ms): contract writes are
   * announced to every replica at once (decision 109); this bounds what a lost announcement costs.
   */
  contractCheckMs: number;
}

export const DEFAULT_ENGINE_SETTINGS: EngineSettings = {
  stallAfterMs: 60_000,
  sweepIntervalMs: 2_000,
  outboxRedeliverMs: 10_000,
  recheckMs: 15_000,
  rosterMaxAgeMs: 1_000,
  contractCheckMs: 1_000,
};

/** What owners are told: heartbeat four times per stall window, at least once a second. */
export function heartbeatIntervalSeconds(settings: EngineSettings): number {
  return Math.max(1, Math.floor(settings.stallAfterMs / 4000));
}
