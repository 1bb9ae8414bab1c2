import type { AgentStatus } from './data';

/** An agent's status as text in a coloured pill (the word carries the meaning, not the colour). */
export function StatusBadge({ status }: { status: AgentStatus }) {
  return <span className={`status-badge status-${status}`}>{status}</span>;
}
