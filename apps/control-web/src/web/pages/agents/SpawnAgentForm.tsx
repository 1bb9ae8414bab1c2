import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import { Link } from 'react-router';
import type { HubApi } from '@svc/sdk';
import { APIError } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { useApi } from '../../app/hooks';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import type { Project } from './data';

type AgentSpawn = HubApi.components['schemas']['AgentSpawn'];
type SpawnRequest = HubApi.components['schemas']['AgentSpawnRequest'];

/** The hub's spawn-policy blocker on a refused spawn (409): what blocks it and what an operator does. */
function blockerOf(error: unknown): { message?: string; recommended_action?: string } | undefined {
  if (!(error instanceof APIError)) return undefined;
  const blocker = (error.problem as { blocker?: unknown } | undefined)?.blocker;
  return blocker && typeof blocker === 'object'
    ? (blocker as { message?: string; recommended_action?: string })
    : undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawn an agent through the hub spawn path: the project's spawn policy decides, the hub picks a spawn-ready
 * host and calls its relay. The answer is 201 when the spawn ended while the request waited, else 202 and the
 * spawn is read until it has started or failed. A refusal shows the policy's blocker and its recommended
 * action. The request carries its own `spawn_id`, so a retry of the same submission is the same spawn.
 */
export function SpawnAgentForm({ projects, onSpawned }: { projects: Project[]; onSpawned: () => void }) {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  const ids = { project: useId(), capabilities: useId(), model: useId(), name: useId(), serve: useId() };
  const policy = useApi(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/spawn-policy', {
          params: { path: { workspace: workspace.id } },
          signal,
        })
        .then(unwrap),
    [workspace.id],
  );
  const [project, setProject] = useState(projects[0]?.code ?? '');
  const [capabilities, setCapabilities] = useState('');
  const [model, setModel] = useState('');
  const [name, setName] = useState('');
  const [serve, setServe] = useState(true);
  const [spawn, setSpawn] = useState<AgentSpawn>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setSpawn(undefined);
    const caps = capabilities
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    const body: SpawnRequest = {
      project,
      serve,
      spawn_id: `web-${crypto.randomUUID()}`,
      ...(caps.length ? { capabilities: caps } : {}),
      ...(model ? { model } : {}),
      ...(name.trim() ? { name: name.trim() } : {}),
    };
    try {
      let current = await hub.raw
        .POST('/api/v1/workspaces/{workspace}/agent-spawns', {
          params: { path: { workspace: workspace.id } },
          body,
        })
        .then(unwrap);
      setSpawn(current);
      while (current.state === 'requested' || current.state === 'in_progress') {
        await sleep(1000);
        current = await hub.raw
          .GET('/api/v1/workspaces/{workspace}/agent-spawns/{spawnId}', {
            params: { path: { workspace: workspace.id, spawnId: current.id } },
          })
          .then(unwrap);
        setSpawn(current);
      }
      onSpawned();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  if (policy.loading && !policy.data) return <Loading what="Reading the spawn policy" />;
  const rules = policy.data;
  const blocker = blockerOf(error);
  return (
    <form className="spawn-form" onSubmit={(e) => void submit(e)} aria-labelledby="spawn-title">
      <h2 id="spawn-title">Spawn an agent</h2>
      <ProblemMessage error={policy.error} context="The spawn policy could not be read" />
      {rules && !rules.enabled && (
        <p className="notice">
          Spawning is off in this workspace. Turn it on in{' '}
          <Link to={`/w/${workspace.slug}/settings/spawn-policy`}>Settings → Spawn policy</Link>.
        </p>
      )}
      <div className="form-grid">
        <label htmlFor={ids.project}>Project</label>
        <select id={ids.project} value={project} onChange={(e) => setProject(e.target.value)} required>
          {projects.map((p) => (
            <option key={p.id} value={p.code}>
              {p.name} ({p.code})
            </option>
          ))}
        </select>
        <label htmlFor={ids.capabilities}>Capabilities</label>
        <input
          id={ids.capabilities}
          value={capabilities}
          onChange={(e) => setCapabilities(e.target.value)}
          placeholder={rules?.allowed_capabilities.join(', ') || 'comma-separated'}
          aria-describedby={`${ids.capabilities}-hint`}
        />
        <span id={`${ids.capabilities}-hint`} className="hint">
          Comma-separated; each must be allowed by the policy
          {rules?.allowed_capabilities.length ? ` (${rules.allowed_capabilities.join(', ')})` : ''}.
        </span>
        <label htmlFor={ids.model}>Model</label>
        <select id={ids.model} value={model} onChange={(e) => setModel(e.target.value)}>
          <option value="">
            Policy default{rules?.allowed_models[0] ? ` (${rules.allowed_models[0]})` : ''}
          </option>
          {rules?.allowed_models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <label htmlFor={ids.name}>Name</label>
        <input
          id={ids.name}
          value={name}
          onChange={(e) => setName(e.target.value)}
          pattern="[a-z0-9][a-z0-9\-]{0,62}"
          placeholder="generated when empty"
          title="Lower-case letters, digits and dashes"
        />
        <span className="form-check">
          <input
            id={ids.serve}
            type="checkbox"
            checked={serve}
            onChange={(e) => setServe(e.target.checked)}
          />
          <label htmlFor={ids.serve}>Serve its console (health, chat, terminal)</label>
        </span>
      </div>
      <button type="submit" className="button-primary" disabled={busy || !project}>
        {busy ? 'Spawning…' : 'Spawn agent'}
      </button>
      {spawn && (
        <p role="status" className={`spawn-state spawn-${spawn.state}`} data-testid="spawn-state">
          Spawn <code>{spawn.id}</code>: {spawn.state}
          {spawn.state === 'started' && ` — ${spawn.name} on ${spawn.runtime_instance_id}`}
          {spawn.error && ` — ${spawn.error.code}${spawn.error.detail ? `: ${spawn.error.detail}` : ''}`}
        </p>
      )}
      <ProblemMessage error={error} context="The agent was not spawned" />
      {blocker?.recommended_action && (
        <p className="notice">
          <strong>What to do:</strong> {blocker.recommended_action}
        </p>
      )}
    </form>
  );
}
