import type { AgentStatus } from '../generated/prisma/client';

export interface RosterEntry {
  id: string;
  name: string;
  status: Exclude<AgentStatus, 'evicted'>;
  capabilities: string[];
  runtimeInstanceId: string | null;
  lastHeartbeatAt: Date | null;
  running: boolean;
  /** The project's active teams through which the agent is on the roster, sorted. */
  teamIds: string[];
}

/** Idle agents are the first choice for new work, then online, then busy ones; any other status last. */
const STATUS_RANK: Record<string, number> = { idle: 0, online: 1, busy: 2 };
const rank = (status: string) => STATUS_RANK[status] ?? 3;

/** Roster order: the best choice for new work first, then by name and id. */
export function compareRosterEntries(a: RosterEntry, b: RosterEntry): number {
  return (
    rank(a.status) - rank(b.status) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Agents free to take work: running and online or idle. */
export const AVAILABLE_STATUSES: AgentStatus[] = ['online', 'idle'];
