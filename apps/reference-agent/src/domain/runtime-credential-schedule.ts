/** A credential is refreshed once this share of its life has passed. */
export const REFRESH_AT_FRACTION = 2 / 3;
/** setTimeout's largest delay; a later refresh point is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Milliseconds from `now` until a credential obtained at `obtainedAt` and expiring at `expiresAt` should be
 * refreshed: at two thirds of the life it had when obtained, at once when that point has passed (or the
 * credential has already expired), never more than a timer can wait.
 */
export function refreshDelayMs(obtainedAt: number, expiresAt: number, now: number): number {
  const life = Math.max(0, expiresAt - obtainedAt);
  const due = obtainedAt + life * REFRESH_AT_FRACTION;
  return Math.min(MAX_TIMER_MS, Math.max(0, Math.round(due - now)));
}
