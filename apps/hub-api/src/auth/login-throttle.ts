import { createHash } from 'node:crypto';
import type { Logger } from '@svc/service-kit';
import type { Db } from '../db';

/**
 * Per-client limits on failed sign-ins, in front of the per-account lockout (decision 47). A client is the
 * request's address (`req.ip`, which follows the `trust proxy` setting). Two limits per fixed window:
 * - failures of one client against one account, over a window four times the lock: a single client can lock
 *   an account for at most fifteen minutes of every hour, however long it keeps trying;
 * - failures of one client against all accounts: stops password sprays.
 * A throttled attempt is refused before the password is looked at and does not count against the account.
 *
 * The windows live in Postgres (`login_throttle_windows`), so every hub replica counts against the same limits
 * and a client alternating between replicas gets no more attempts than against one (decision 81). Keys are
 * digests of the client and account: the table names no address or email.
 */
export interface LoginThrottleOptions {
  windowMs: number;
  perAccount: number;
  perClient: number;
  now: () => number;
  db: Pick<Db, '$queryRaw' | '$executeRaw'>;
  logger?: Logger;
  /** How often one replica deletes windows that have ended (every replica may; the delete is idempotent). */
  sweepIntervalMs?: number;
}

/**
 * One client may fail ten times per hour on one account (it can lock the account for fifteen minutes, and is
 * then refused for the rest of the hour, so the owner signs in meanwhile) and thirty times per hour overall.
 */
export const LOGIN_THROTTLE_DEFAULTS = { windowMs: 60 * 60_000, perAccount: 10, perClient: 30 };

interface CountedRow {
  window_started_at: Date;
  window_failures: number;
  window_limit: number;
  /** Whether the attempt was counted (in every window) or refused (in none). */
  counted: boolean;
}

export class LoginThrottle {
  private lastSweep = 0;

  constructor(private readonly options: LoginThrottleOptions) {}

  /**
   * Counts a failure before the password is checked (so parallel attempts of one client are counted as they
   * arrive, not as they finish, on whichever replica they land). Answers 0 when the attempt was admitted, or
   * the seconds until this client may try this account again, when it is over a limit and must not be
   * evaluated; a refused attempt is not counted.
   */
  async admit(client: string, account: string): Promise<number> {
    const now = this.options.now();
    const windows = this.windowsOf(client, account);
    const keys = windows.map((w) => w.key);
    const limits = windows.map((w) => w.limit);
    // One round trip (the function is in the migration that made the table): creates the client's windows
    // on its first failure, locks them in key order and counts the attempt in both or neither. Attempts of one
    // client on every replica queue on these rows, so the check and the count see no attempt in between.
    const rows = await this.options.db.$queryRaw<CountedRow[]>`
      SELECT window_started_at, window_failures, window_limit, counted
      FROM login_throttle_count(${keys}::text[], ${limits}::int[], ${new Date(now)}::timestamptz,
        ${new Date(now - this.options.windowMs)}::timestamptz)`;
    this.sweep(now);
    if (rows.length === windows.length && rows.every((row) => row.counted)) return 0;
    let wait = 1;
    for (const row of rows) {
      const endsAt = row.window_started_at.getTime() + this.options.windowMs;
      if (endsAt <= now || row.window_failures < row.window_limit) continue;
      wait = Math.max(wait, Math.ceil((endsAt - now) / 1000));
    }
    return wait;
  }

  /** A right password: the attempt was counted on admission and is given back. */
  async succeeded(client: string, account: string): Promise<void> {
    const ended = new Date(this.options.now() - this.options.windowMs);
    const keys = this.windowsOf(client, account).map((w) => w.key);
    await this.options.db.$executeRaw`
      UPDATE login_throttle_windows SET failures = failures - 1
      WHERE key = ANY(${keys}::text[]) AND failures > 0 AND started_at > ${ended}::timestamptz`;
  }

  private windowsOf(client: string, account: string): { key: string; limit: number }[] {
    const digest = (value: string) => createHash('sha256').update(value).digest('base64url');
    return [
      { key: digest(`client\u0000${client}`), limit: this.options.perClient },
      { key: digest(`account\u0000${client}\u0000${account}`), limit: this.options.perAccount },
    ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Deletes ended windows at most once per interval, after the attempt's answer is settled. */
  private sweep(now: number): void {
    const interval = this.options.sweepIntervalMs ?? 60_000;
    if (now - this.lastSweep < interval) return;
    this.lastSweep = now;
    const ended = new Date(now - this.options.windowMs);
    this.options.db
      .$executeRaw`DELETE FROM login_throttle_windows WHERE started_at <= ${ended}::timestamptz`.catch(
      (error: unknown) => this.options.logger?.warn({ err: error }, 'could not delete ended sign-in windows'),
    );
  }
}
