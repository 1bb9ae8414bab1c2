import { Link } from 'react-router';
import { useWorkspaceAgents } from '../../app/agents';
import { useWorkspace } from '../../app/workspace';
import { ProblemMessage } from '../../components/ProblemMessage';
import { useWorkspaceNetworks } from '../../app/networks';

const RUNNING = new Set(['online', 'idle', 'busy']);

/** Runtime hosts ready to spawn and agents running now, read again every 10 s, each linking to its page. */
export function SummaryCards() {
  const { workspace } = useWorkspace();
  const base = `/w/${workspace.slug}`;
  const networks = useWorkspaceNetworks(10_000);
  const agents = useWorkspaceAgents(10_000);
  const hosts = networks.data?.hosts;
  const ready = hosts?.filter((h) => h.spawn_ready).length;
  const live = agents.data?.filter((a) => a.status !== 'evicted');
  // Counted as Networks counts them: an agent on a host whose heartbeat is stale is not online, whatever its
  // own status says, and is shown apart.
  const freshHosts = new Set(
    hosts?.filter((h) => h.readiness.heartbeat_fresh).map((h) => h.runtime_instance_id),
  );
  const onStaleHost = (a: { runtime_instance_id: string | null }) =>
    a.runtime_instance_id !== null && hosts !== undefined && !freshHosts.has(a.runtime_instance_id);
  const running = live?.filter((a) => RUNNING.has(a.status) && !onStaleHost(a)).length;
  const stranded = live?.filter((a) => RUNNING.has(a.status) && onStaleHost(a)).length ?? 0;
  const notReady = hosts?.filter((h) => !h.spawn_ready) ?? [];
  return (
    <>
      <ul className="summary" aria-label="Workspace summary">
        <li className="card" data-testid="summary-hosts">
          <span className="card-number">{hosts ? `${ready} / ${hosts.length}` : '…'}</span>
          <span className="card-label">runtime hosts spawn ready</span>
          {notReady.length > 0 && (
            <ul className="card-causes small" data-testid="summary-host-causes">
              {notReady.map((h) => (
                <li key={h.runtime_instance_id}>
                  {h.name}: {h.readiness.causes[0]?.message ?? 'not spawn ready'}
                </li>
              ))}
            </ul>
          )}
          <Link to={`${base}/networks`}>Networks</Link>
        </li>
        <li className="card" data-testid="summary-agents">
          <span className="card-number">{live ? `${running} / ${live.length}` : '…'}</span>
          <span className="card-label">agents online</span>
          {stranded > 0 && (
            <span className="not-ready small" data-testid="summary-stale-agents">
              {stranded} on a stale host
            </span>
          )}
          <Link to={`${base}/agents`}>Agents</Link>
        </li>
        <li className="card" data-testid="summary-running">
          <span className="card-number">
            {hosts ? hosts.reduce((sum, h) => sum + h.running_agents, 0) : '…'}
          </span>
          <span className="card-label">agents with a fresh heartbeat on the hosts</span>
          {hosts && hosts.some((h) => !h.readiness.heartbeat_fresh && h.running_agents > 0) && (
            <span className="not-ready small">some on a stale host</span>
          )}
          <Link to={`${base}/networks`}>Hosts</Link>
        </li>
      </ul>
      <ProblemMessage error={networks.error} context="Runtime hosts could not be read" />
      <ProblemMessage error={agents.error} context="Agents could not be read" />
    </>
  );
}
