import { unwrap } from '../../app/api';
import { usePolling } from '../../app/hooks';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { ago } from '../../components/time';
import { EnvironmentsTable } from './EnvironmentsTable';
import { HostCard } from './HostCard';
import { useNow } from './use-now';
import './networks.css';
import { useWorkspaceNetworks } from '../../app/networks';

/** How often the view is read again; a host heartbeats about every 10 s. */
const REFRESH_MS = 5000;

/**
 * Networks: every runtime host with spawn readiness and its reasons, heartbeat age, running agents, console
 * and relay URLs and tunnel, read again every 5 s (ages count up in between); then the runtime environments.
 */
export function NetworksPage() {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  const now = useNow();
  const view = useWorkspaceNetworks(REFRESH_MS);
  const environments = usePolling(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-environments', {
          params: { path: { workspace: workspace.id } },
          signal,
        })
        .then(unwrap),
    REFRESH_MS * 3,
    [workspace.id],
  );
  const hosts = view.data?.hosts;
  const ready = hosts?.filter((h) => h.spawn_ready).length ?? 0;

  return (
    <section aria-labelledby="page-title" className="page-networks">
      <div className="page-head">
        <h1 id="page-title">Networks</h1>
        <p className="live" role="status" aria-live="off" data-testid="networks-updated">
          <span className="live-dot" aria-hidden="true" /> Live · updated{' '}
          {view.updatedAt ? ago(view.updatedAt, now) : '—'}
        </p>
      </div>
      {hosts && (
        <p className="muted">
          {hosts.length === 0
            ? 'No runtime hosts yet.'
            : `${ready} of ${hosts.length} runtime ${hosts.length === 1 ? 'host is' : 'hosts are'} spawn ready.`}{' '}
          A host is spawn ready when its last heartbeat is at most 45 s old and its relay is ready.
        </p>
      )}
      {hosts && hosts.length === 0 && (
        <p>
          Start one with <code>svc runtime up</code> on the machine that should run agents.
        </p>
      )}
      <ProblemMessage error={view.error} context="The Networks view could not be read" />
      {view.loading && !view.data && <Loading what="Reading the runtime hosts" />}
      <div className="hosts">
        {hosts?.map((host) => (
          <HostCard key={host.runtime_instance_id} host={host} now={now} onChanged={view.reload} />
        ))}
      </div>

      <h2>Runtime environments</h2>
      <ProblemMessage error={environments.error} context="The runtime environments could not be read" />
      {environments.loading && !environments.data && <Loading what="Reading the runtime environments" />}
      {environments.data && <EnvironmentsTable environments={environments.data} />}
    </section>
  );
}
