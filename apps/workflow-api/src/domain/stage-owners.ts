import type { EngineSettings } from './engine-settings';

/** A roster entry as the engine reads it to judge an owner's liveness (the hub's internal roster). */
export interface RosterPresence {
  agent_id: string;
  running: boolean;
  status: string;
  last_heartbeat_at: string | null;
}

/** When each agent a stage was taken from was last taken from it (agent id → ISO time), as stored. */
export type StallTimes = Record<string, string>;

export function stallTimesOf(value: unknown): StallTimes {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  const times: StallTimes = {};
  for (const [agent, at] of Object.entries(value as Record<string, unknown>)) {
    if (typeof at === 'string') times[agent] = at;
  }
  return times;
}

/** The stall times with `agentId` taken from the stage at `at`. */
export function withStall(value: unknown, agentId: string, at: Date): StallTimes {
  return { ...stallTimesOf(value), [agentId]: at.toISOString() };
}

/**
 * How long an owner's stage may be silent before the engine asks the hub whether the owner is still running
 * (half the stall window: owners heartbeat four times per window, so a live owner is never asked about).
 */
export function ownerCheckAfterMs(settings: Pick<EngineSettings, 'stallAfterMs'>): number {
  return Math.max(1_000, Math.floor(settings.stallAfterMs / 2));
}

/** How often, at most, the sweeper has a run with a silent owner reconciled to ask about it. */
export function ownerCheckEveryMs(settings: Pick<EngineSettings, 'stallAfterMs'>): number {
  return Math.max(1_000, Math.min(5_000, Math.floor(settings.stallAfterMs / 12)));
}

/**
 * Whether the stage's owner is gone by the hub's word: not on the roster any more, or on it but not running
 * (`lost` — its host stopped heartbeating —, stopped, or silent past the hub's freshness window).
 */
export function ownerGone(
  roster: readonly RosterPresence[],
  ownerAgentId: string,
): RosterPresence | 'absent' | null {
  const entry = roster.find((agent) => agent.agent_id === ownerAgentId);
  if (!entry) return 'absent';
  return entry.running ? null : entry;
}

export interface StalledOwners {
  /** Agents taken from the stage that have shown no life since: never offered it. */
  excluded: string[];
  /** Agents taken from the stage that heartbeated at the hub since: offered it after every other candidate. */
  returned: string[];
}

/**
 * Which of the agents a stage was taken from may have it again. One that heartbeated at the hub after it was
 * taken from the stage has shown life (it came back after a lost host, a pause, a restart) and may, after every
 * agent never taken from it; the others stay excluded. An agent taken before stall times were kept (no time)
 * counts as taken at the start, so any heartbeat is life.
 */
export function stalledOwners(
  stalledIds: readonly string[],
  times: StallTimes,
  roster: readonly RosterPresence[],
): StalledOwners {
  const excluded: string[] = [];
  const returned: string[] = [];
  for (const agentId of new Set(stalledIds)) {
    const entry = roster.find((agent) => agent.agent_id === agentId);
    const takenAt = Date.parse(times[agentId] ?? '1970-01-01T00:00:00Z');
    const seenAt = entry?.last_heartbeat_at ? Date.parse(entry.last_heartbeat_at) : Number.NaN;
    if (entry?.running && seenAt > takenAt) returned.push(agentId);
    else excluded.push(agentId);
  }
  return { excluded, returned };
}
