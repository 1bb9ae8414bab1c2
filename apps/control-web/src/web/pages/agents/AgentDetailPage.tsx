import { Suspense, lazy, useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { unwrap } from '../../app/api';
import { usePolling } from '../../app/hooks';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { ago, dateTime } from '../../components/time';
import { AgentActions } from './AgentActions';
import { ChatPanel } from './console/ChatPanel';
import { HealthPanel } from './console/HealthPanel';
import { TicketSource } from './console/tickets';
import { consoleUrlOf, RUNNING } from './data';
import { StatusBadge } from './StatusBadge';
import './agents.css';
import { useWorkspaceNetworks } from '../../app/networks';

/** xterm.js is most of the page's code: it is loaded when a console is opened, not with the app. */
const TerminalPanel = lazy(() =>
  import('./console/TerminalPanel').then((module) => ({ default: module.TerminalPanel })),
);

/** One agent: its facts, stop and evict, and its live console (health, chat, terminal) while it runs. */
export function AgentDetailPage() {
  const { agentId = '' } = useParams();
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  const agent = usePolling(
    (signal) =>
      hub.raw.GET('/api/v1/agents/{agentId}', { params: { path: { agentId } }, signal }).then(unwrap),
    5000,
    [agentId],
  );
  const networks = useWorkspaceNetworks(15_000);
  const tickets = useMemo(() => new TicketSource(hub, agentId), [hub, agentId]);
  const a = agent.data;
  const host = a?.runtime_instance_id
    ? networks.data?.hosts.find((h) => h.runtime_instance_id === a.runtime_instance_id)
    : undefined;
  const consoleUrl = a && consoleUrlOf(a, host);
  const running = a !== undefined && RUNNING.includes(a.status);

  return (
    <section aria-labelledby="page-title">
      <p className="breadcrumb">
        <Link to={`/w/${workspace.slug}/agents`}>Agents</Link> /
      </p>
      <div className="page-head">
        <h1 id="page-title">{a ? a.name : 'Agent'}</h1>
        {a && <StatusBadge status={a.status} />}
        {a && <AgentActions agent={a} onChanged={agent.reload} />}
      </div>
      <ProblemMessage error={agent.error} context="The agent could not be loaded" />
      {!a ? (
        !agent.error && <Loading what="Loading the agent" />
      ) : (
        <>
          <dl className="facts">
            <dt>Id</dt>
            <dd>
              <code>{a.id}</code>
            </dd>
            <dt>Host</dt>
            <dd>{host ? `${host.name} (${a.runtime_instance_id})` : (a.runtime_instance_id ?? '—')}</dd>
            <dt>Model</dt>
            <dd>{a.model ?? '—'}</dd>
            <dt>Capabilities</dt>
            <dd>{a.capabilities.join(', ') || '—'}</dd>
            <dt>Last heartbeat</dt>
            <dd>{ago(a.last_heartbeat_at)}</dd>
            <dt>Started</dt>
            <dd>{dateTime(a.started_at)}</dd>
            {a.evicted_at && (
              <>
                <dt>Evicted</dt>
                <dd>{dateTime(a.evicted_at)}</dd>
              </>
            )}
            <dt>Console</dt>
            <dd>{consoleUrl ? <code>{consoleUrl}</code> : 'none (no console route)'}</dd>
          </dl>
          <h2>Console</h2>
          {!consoleUrl ? (
            <p className="muted">This agent serves no console.</p>
          ) : !running ? (
            <p className="muted">The console is available while the agent runs (it is {a.status}).</p>
          ) : (
            <div className="console-grid">
              <HealthPanel consoleUrl={consoleUrl} tickets={tickets} />
              <ChatPanel consoleUrl={consoleUrl} tickets={tickets} />
              <Suspense fallback={<Loading what="Loading the terminal" />}>
                <TerminalPanel consoleUrl={consoleUrl} tickets={tickets} />
              </Suspense>
            </div>
          )}
        </>
      )}
    </section>
  );
}
