import type { Db } from '../db';
import { atWarning, budgetPeriods } from '../domain/assist-settings';
import type { AssistBudgetLimits, BudgetPeriod } from '../domain/assist-settings';

export interface BudgetPeriodUsage {
  period: BudgetPeriod;
  calls: number;
  tokens: number;
  callsLimit: number;
  tokensLimit: number;
  warning: boolean;
  exhausted: boolean;
}

export interface BudgetUsage {
  day: BudgetPeriodUsage;
  month: BudgetPeriodUsage;
  warningPercent: number;
  warning: boolean;
  exhausted: boolean;
}

type Tx = Pick<Db, '$queryRaw' | '$executeRaw'>;

async function readUsage(tx: Tx, projectId: string, day: BudgetPeriod, month: BudgetPeriod) {
  const rows = await tx.$queryRaw<{ period: string; calls: number; tokens: bigint }[]>`
    SELECT period, calls, tokens FROM assistance_usage
    WHERE project_id = ${projectId}
      AND ((period = 'day' AND period_start = ${day.start}::date)
        OR (period = 'month' AND period_start = ${month.start}::date))`;
  const of = (kind: string) => rows.find((r) => r.period === kind);
  return {
    day: { calls: of('day')?.calls ?? 0, tokens: Number(of('day')?.tokens ?? 0n) },
    month: { calls: of('month')?.calls ?? 0, tokens: Number(of('month')?.tokens ?? 0n) },
  };
}

function usageView(
  used: { day: { calls: number; tokens: number }; month: { calls: number; tokens: number } },
  limits: AssistBudgetLimits,
  periods: { day: BudgetPeriod; month: BudgetPeriod },
  nextTokens: number,
): BudgetUsage {
  const one = (
    period: BudgetPeriod,
    u: { calls: number; tokens: number },
    callsLimit: number,
    tokensLimit: number,
  ): BudgetPeriodUsage => ({
    period,
    calls: u.calls,
    tokens: u.tokens,
    callsLimit,
    tokensLimit,
    warning:
      atWarning(u.calls, callsLimit, limits.warningPercent) ||
      atWarning(u.tokens, tokensLimit, limits.warningPercent),
    exhausted: u.calls + 1 > callsLimit || u.tokens + nextTokens > tokensLimit,
  });
  const day = one(periods.day, used.day, limits.callsPerDay, limits.tokensPerDay);
  const month = one(periods.month, used.month, limits.callsPerMonth, limits.tokensPerMonth);
  return {
    day,
    month,
    warningPercent: limits.warningPercent,
    warning: day.warning || month.warning,
    exhausted: day.exhausted || month.exhausted,
  };
}

/** The project's usage this UTC day and month against its ceilings (a read; reserves nothing). */
export async function readAssistBudget(
  db: Tx,
  projectId: string,
  limits: AssistBudgetLimits,
  now: Date,
): Promise<BudgetUsage> {
  const periods = budgetPeriods(now);
  const used = await readUsage(db, projectId, periods.day, periods.month);
  return usageView(used, limits, periods, 1);
}

export type BudgetReservation =
  | { reserved: true; usage: BudgetUsage; periods: { day: BudgetPeriod; month: BudgetPeriod } }
  | { reserved: false; usage: BudgetUsage };

/**
 * Reserves one call and `tokens` tokens in the project's day and month before a model call, or nothing when
 * either ceiling would be passed. The project's settings row is locked (`FOR UPDATE`) for the check and the
 * increment, so concurrent reservations of one project queue on it and can never overspend; the ceilings are
 * read under the same lock, so a lowered ceiling applies to the next reservation.
 */
export async function reserveAssistBudget(
  db: Db,
  projectId: string,
  tokens: number,
  now: Date,
): Promise<BudgetReservation> {
  const periods = budgetPeriods(now);
  return db.$transaction(
    async (tx) => {
      const locked = await tx.$queryRaw<
        {
          calls_per_day: number;
          tokens_per_day: bigint;
          calls_per_month: number;
          tokens_per_month: bigint;
          warning_percent: number;
        }[]
      >`
      SELECT calls_per_day, tokens_per_day, calls_per_month, tokens_per_month, warning_percent
      FROM assistance_settings WHERE project_id = ${projectId} FOR UPDATE`;
      const row = locked[0];
      if (!row) throw new Error(`assistance settings of ${projectId} vanished`);
      const limits: AssistBudgetLimits = {
        callsPerDay: row.calls_per_day,
        tokensPerDay: Number(row.tokens_per_day),
        callsPerMonth: row.calls_per_month,
        tokensPerMonth: Number(row.tokens_per_month),
        warningPercent: row.warning_percent,
      };
      const used = await readUsage(tx, projectId, periods.day, periods.month);
      const before = usageView(used, limits, periods, tokens);
      if (before.exhausted) return { reserved: false, usage: before };
      await tx.$executeRaw`
      INSERT INTO assistance_usage (project_id, period, period_start, calls, tokens)
      VALUES (${projectId}, 'day', ${periods.day.start}::date, 1, ${tokens}),
             (${projectId}, 'month', ${periods.month.start}::date, 1, ${tokens})
      ON CONFLICT (project_id, period, period_start)
      DO UPDATE SET calls = assistance_usage.calls + 1, tokens = assistance_usage.tokens + EXCLUDED.tokens`;
      const after = {
        day: { calls: used.day.calls + 1, tokens: used.day.tokens + tokens },
        month: { calls: used.month.calls + 1, tokens: used.month.tokens + tokens },
      };
      return { reserved: true, usage: usageView(after, limits, periods, 0), periods };
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
}

/**
 * Replaces a reservation's estimated tokens by what the provider reported (`delta` = actual − reserved, usually
 * negative). The call itself stays counted whatever its outcome.
 */
export async function settleAssistBudget(
  db: Tx,
  projectId: string,
  periods: { day: BudgetPeriod; month: BudgetPeriod },
  delta: number,
): Promise<void> {
  if (delta === 0) return;
  await db.$executeRaw`
    UPDATE assistance_usage SET tokens = GREATEST(tokens + ${delta}, 0)
    WHERE project_id = ${projectId}
      AND ((period = 'day' AND period_start = ${periods.day.start}::date)
        OR (period = 'month' AND period_start = ${periods.month.start}::date))`;
}
