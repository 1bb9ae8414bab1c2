/**
 * A console router's clock may run a little ahead of the hub's; a reported time up to this far in the future is
 * kept as reported, anything later is recorded as the hub's now (a wrong clock cannot pin an agent's activity
 * in the future, where no later report could correct it).
 */
export const CONSOLE_ACTIVITY_MAX_SKEW_MS = 60_000;

/** One route's last activity as a console router reports it with its host's heartbeat. */
export interface ConsoleRouteActivityReport {
  agentId: string;
  /** ISO date-time; null when the route has had no successful request yet. */
  lastActivityAt: string | null;
}

/** Parallel arrays, one entry per agent id, ready for one `unnest` update. */
export interface ConsoleActivityUpdate {
  agentIds: string[];
  times: Date[];
}

/**
 * The values worth storing from one report: routes without activity (or with an unreadable time) are dropped,
 * an agent reported twice keeps its latest time, and a time beyond the allowed skew is clamped to `now`.
 */
export function consoleActivityUpdate(
  reports: ConsoleRouteActivityReport[],
  now: Date,
): ConsoleActivityUpdate {
  const latest = new Map<string, number>();
  const limit = now.getTime() + CONSOLE_ACTIVITY_MAX_SKEW_MS;
  for (const report of reports) {
    if (report.lastActivityAt === null) continue;
    let time = Date.parse(report.lastActivityAt);
    if (Number.isNaN(time)) continue;
    if (time > limit) time = now.getTime();
    const known = latest.get(report.agentId);
    if (known === undefined || time > known) latest.set(report.agentId, time);
  }
  const agentIds = [...latest.keys()];
  return { agentIds, times: agentIds.map((id) => new Date(latest.get(id) as number)) };
}
