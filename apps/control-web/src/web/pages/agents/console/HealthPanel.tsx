import { usePolling } from '../../../app/hooks';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ago, dateTime } from '../../../components/time';
import { routerJson } from './router-fetch';
import type { TicketSource } from './tickets';
import type { AgentConsoleHealth } from './types';

function uptime(seconds: number): string {
  const s = Math.floor(seconds);
  const parts = [
    [Math.floor(s / 86_400), 'd'],
    [Math.floor((s % 86_400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'min'],
    [s % 60, 's'],
  ] as const;
  const shown = parts.filter(([n], i) => n > 0 || i === parts.length - 1);
  return shown.map(([n, unit]) => `${n} ${unit}`).join(' ');
}

/** The agent's own answer on `GET /global/health` through the console router, every 5 s. */
export function HealthPanel({ consoleUrl, tickets }: { consoleUrl: string; tickets: TicketSource }) {
  const health = usePolling(
    (signal) => routerJson<AgentConsoleHealth>(consoleUrl, tickets, '/global/health', { signal }),
    5000,
    [consoleUrl, tickets],
  );
  return (
    <section aria-labelledby="health-title" className="console-panel">
      <h3 id="health-title">Health</h3>
      {health.data ? (
        <dl className="facts" aria-live="polite">
          <dt>Agent id</dt>
          <dd>
            <code data-testid="health-agent-id">{health.data.agent_id}</code>
          </dd>
          <dt>Name</dt>
          <dd>{health.data.name}</dd>
          <dt>Status</dt>
          <dd>{health.data.status}</dd>
          <dt>Up for</dt>
          <dd data-testid="health-uptime">{uptime(health.data.uptime_seconds)}</dd>
          <dt>Started</dt>
          <dd>{dateTime(health.data.started_at)}</dd>
          <dt>Checked</dt>
          <dd>{ago(health.updatedAt)}</dd>
        </dl>
      ) : (
        !health.error && <Loading what="Asking the agent" />
      )}
      <ProblemMessage error={health.error} context="Health check failed" />
    </section>
  );
}
