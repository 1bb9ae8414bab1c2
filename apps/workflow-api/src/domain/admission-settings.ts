/** Fair admission of the Workflow API's requests (decision 100). */
export interface AdmissionSettings {
  /** Requests in flight in the process (every key). */
  maxInFlight: number;
  /** Requests in flight of one key (a project, or an agent on its own routes). */
  maxInFlightPerKey: number;
  /** Requests waiting in the process; one beyond it is answered 503 `overloaded` at once. */
  maxQueued: number;
  /** A request that waited this long for its turn is answered 503 `overloaded`. */
  queueTimeoutMs: number;
  /** `Retry-After` (seconds) of an `overloaded` answer. */
  retryAfterSeconds: number;
}

/**
 * Defaults for a database pool of `poolSize` connections: as many in flight as the pool has connections (a request
 * admitted does not then wait for one), ¾ of them for one key.
 */
export function defaultAdmissionSettings(poolSize = 10): AdmissionSettings {
  const maxInFlight = Math.max(2, poolSize);
  return {
    maxInFlight,
    maxInFlightPerKey: Math.max(1, Math.floor((maxInFlight * 3) / 4)),
    maxQueued: 10_000,
    queueTimeoutMs: 30_000,
    retryAfterSeconds: 1,
  };
}
