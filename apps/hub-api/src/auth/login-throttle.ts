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
  key: string;
  started_at: Date;
  failures: number;
  lim: number;
  /** How many windows the attempt was counted in: all of them, or none. */
  counted: number;
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
    let rows = await this.countAttempt(windows, now);
    if (rows.length < windows.length) {
      // A client's first failure in this table: create its windows, then count as usual.
      const keys = windows.map((w) => w.key);
      await this.options.db.$executeRaw`
        INSERT INTO login_throttle_windows (key, started_at, failures)
        SELECT k, ${new Date(now)}::timestamptz, 0 FROM unnest(${keys}::text[]) AS k
        ON CONFLICT (key) DO NOTHING`;
      rows = await this.countAttempt(windows, now);
    }
    this.sweep(now);
    if (rows.length === windows.length && rows[0]!.counted === windows.length) return 0;
    let wait = 1;
    for (const row of rows) {
      const live = row.started_at.getTime() + this.options.windowMs > now;
      if (!live || row.failures < row.lim) continue;
      wait = Math.max(wait, Math.ceil((row.started_at.getTime() + this.options.windowMs - now) / 1000));
    }
    return wait;
  }

  /**
   * One statement: locks the client's windows in key order (so two attempts never deadlock), and counts the
   * attempt in both when neither is at its limit (a window that has ended starts again). Every replica's
   * attempts on one client queue on these row locks, so the check and the count see no attempt in between.
   */
  private async countAttempt(windows: { key: string; limit: number }[], now: number): Promise<CountedRow[]> {
    const keys = windows.map((w) => w.key);
    const limits = windows.map((w) => w.limit);
    const ended = new Date(now - this.options.windowMs);
    return this.options.db.$queryRaw<CountedRow[]>`
      WITH current AS (
        SELECT w.key, w.started_at, w.failures, l.lim
        FROM login_throttle_windows w
        JOIN unnest(${keys}::text[], ${limits}::int[]) AS l(key, lim) ON w.key = l.key
        ORDER BY w.key
        FOR UPDATE OF w
      ), verdict AS (
        SELECT count(*) = ${keys.length} AND bool_and(started_at <= ${ended}::timestamptz OR failures < lim) AS ok
        FROM current
      ), counted AS (
        UPDATE login_throttle_windows w SET
          started_at = CASE WHEN c.started_at <= ${ended}::timestamptz THEN ${new Date(now)}::timestamptz ELSE c.started_at END,
          failures = CASE WHEN c.started_at <= ${ended}::timestamptz THEN 1 ELSE c.failures + 1 END
        FROM current c, verdict v
        WHERE w.key = c.key AND v.ok
        RETURNING w.key
      )
      SELECT c.key, c.started_at, c.failures, c.lim, (SELECT count(*)::int FROM counted) AS counted
      FROM current c`;
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
