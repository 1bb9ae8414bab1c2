/** The hub's statuses of an agent that runs (the others: `offline`, `evicted`). */
export const RUNNING_STATUSES: ReadonlySet<string> = new Set(['online', 'idle', 'busy']);

/** Whether the Networks view counts the agent now (running status and a heartbeat at most 90 s old). */
export function countsOnNetworks(
  agent: { status: string; last_heartbeat_at: string | null },
  now = Date.now(),
): boolean {
  if (!RUNNING_STATUSES.has(agent.status) || !agent.last_heartbeat_at) return false;
  return now - Date.parse(agent.last_heartbeat_at) <= 90_000;
}
