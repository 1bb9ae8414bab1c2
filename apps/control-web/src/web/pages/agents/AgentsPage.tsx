import { useState } from 'react';
import { Link } from 'react-router';
import { usePolling } from '../../app/hooks';
import { MANAGERS, roleAllows } from '../../app/roles';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { ago } from '../../components/time';
import { AgentActions } from './AgentActions';
import { loadAgentsView } from './data';
import { SpawnAgentForm } from './SpawnAgentForm';
import { StatusBadge } from './StatusBadge';
import './agents.css';
import { CardTable } from '../../components/CardTable';

/**
 * The workspace's agents with status, host (and whether it is spawn ready), project and teams, refreshed
 * every 5 s; owners and admins spawn, stop and evict here. Each agent opens its page with the live console.
 */
export function AgentsPage() {
  const { workspace, role } = useWorkspace();
  const clients = useClients();
  const [spawning, setSpawning] = useState(false);
  const view = usePolling((signal) => loadAgentsView(clients, workspace.id, signal), 5000, [workspace.id]);
  const manager = roleAllows(role, MANAGERS);
  const base = `/w/${workspace.slug}/agents`;

  return (
    <section aria-labelledby="page-title">
      <div className="page-head">
        <h1 id="page-title">Agents</h1>
        {manager && (
          <button
            type="button"
            className={spawning ? undefined : 'button-primary'}
            aria-expanded={spawning}
            onClick={() => setSpawning((s) => !s)}
          >
            {spawning ? 'Close spawn form' : 'Spawn agent'}
          </button>
        )}
      </div>
      {spawning && view.data && (
        <SpawnAgentForm projects={[...view.data.projects.values()]} onSpawned={view.reload} />
      )}
      <ProblemMessage error={view.error} context="Agents could not be loaded" />
      {!view.data ? (
        !view.error && <Loading what="Loading agents" />
      ) : view.data.agents.length === 0 ? (
        <p>No agents in this workspace yet.</p>
      ) : (
        <CardTable wide className="agents-table">
          <caption className="visually-hidden">Agents of {workspace.name}</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Status</th>
              <th scope="col">Host</th>
              <th scope="col">Project</th>
              <th scope="col">Teams</th>
              <th scope="col">Heartbeat</th>
              {manager && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {view.data.agents.map((agent) => {
              const host = agent.runtime_instance_id
                ? view.data!.hosts.get(agent.runtime_instance_id)
                : undefined;
              const project = agent.project_id ? view.data!.projects.get(agent.project_id) : undefined;
              const teams = view.data!.teamsOf.get(agent.id) ?? [];
              return (
                <tr key={agent.id} data-agent-name={agent.name}>
                  <th scope="row">
                    <Link to={`${base}/${agent.id}`}>{agent.name}</Link>
                    <div className="muted small">
                      <code>{agent.id}</code>
                    </div>
                  </th>
                  <td>
                    <StatusBadge status={agent.status} />
                  </td>
                  <td>
                    {host ? (
                      <>
                        {host.name}
                        <div className={host.spawn_ready ? 'ready small' : 'not-ready small'}>
                          {host.spawn_ready ? 'spawn ready' : 'not spawn ready'}
                        </div>
                        {!host.readiness.heartbeat_fresh && (
                          <div className="not-ready small" data-testid="agent-host-stale">
                            host stale: {host.readiness.causes[0]?.message ?? 'no fresh heartbeat'}
                          </div>
                        )}
                      </>
                    ) : (
                      (agent.runtime_instance_id ?? '—')
                    )}
                  </td>
                  <td>{project ? `${project.name} (${project.code})` : '—'}</td>
                  <td>{teams.length ? teams.join(', ') : '—'}</td>
                  <td>{ago(agent.last_heartbeat_at)}</td>
                  {manager && (
                    <td>
                      <AgentActions agent={agent} onChanged={view.reload} />
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </CardTable>
      )}
    </section>
  );
}
