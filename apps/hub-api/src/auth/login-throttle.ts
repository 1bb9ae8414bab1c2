/**
 * Per-client limits on failed sign-ins, in front of the per-account lockout (decision 47). A client is the
 * request's address (`req.ip`, which follows the `trust proxy` setting). Two limits per fixed window:
 * - failures of one client against one account, over a window four times the lock: a single client can lock
 *   an account for at most fifteen minutes of every hour, however long it keeps trying;
 * - failures of one client against all accounts: stops password sprays.
 * A throttled attempt is refused before the password is looked at and does not count against the account.
 * Counts are kept per replica (each replica of N admits its own share; the account lockout in the database
 * stays the limit across replicas).
 */
export interface LoginThrottleOptions {
  windowMs: number;
  perAccount: number;
  perClient: number;
  /** Distinct clients tracked at most; the oldest windows are dropped first. */
  maxEntries?: number;
  now: () => number;
}

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * One client may fail ten times per hour on one account (it can lock the account for fifteen minutes, and is
 * then refused for the rest of the hour, so the owner signs in meanwhile) and thirty times per hour overall.
 */
export const LOGIN_THROTTLE_DEFAULTS = { windowMs: 60 * 60_000, perAccount: 10, perClient: 30 };

export class LoginThrottle {
  private readonly windows = new Map<string, Window>();
  private readonly maxEntries: number;

  constructor(private readonly options: LoginThrottleOptions) {
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  /** Seconds until the client may try this account again, or 0 when it may try now. */
  retryAfter(client: string, account: string): number {
    const now = this.options.now();
    const waits = [
      this.wait(`c:${client}`, this.options.perClient, now),
      this.wait(`a:${client}:${account}`, this.options.perAccount, now),
    ];
    return Math.max(...waits);
  }

  /**
   * Counts a failure before the password is checked (so parallel attempts of one client are counted as they
   * arrive, not as they finish); returns false when the attempt is over a limit and must not be evaluated.
   */
  admit(client: string, account: string): boolean {
    if (this.retryAfter(client, account) > 0) return false;
    const now = this.options.now();
    this.bump(`c:${client}`, now);
    this.bump(`a:${client}:${account}`, now);
    return true;
  }

  /** A right password: the attempt was counted on admission and is given back. */
  succeeded(client: string, account: string): void {
    for (const key of [`c:${client}`, `a:${client}:${account}`]) {
      const window = this.windows.get(key);
      if (window && window.failures > 0) window.failures -= 1;
    }
  }

  private wait(key: string, limit: number, now: number): number {
    const window = this.windows.get(key);
    if (!window || now - window.startedAt >= this.options.windowMs) return 0;
    if (window.failures < limit) return 0;
    return Math.max(1, Math.ceil((window.startedAt + this.options.windowMs - now) / 1000));
  }

  private bump(key: string, now: number): void {
    const window = this.windows.get(key);
    if (window && now - window.startedAt < this.options.windowMs) {
      window.failures += 1;
      return;
    }
    this.windows.delete(key);
    this.windows.set(key, { startedAt: now, failures: 1 });
    while (this.windows.size > this.maxEntries) {
      const oldest = this.windows.keys().next().value as string;
      this.windows.delete(oldest);
    }
  }
}
