import { useEffect, useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { useApi } from '../../app/hooks';
import { MANAGERS, roleAllows } from '../../app/roles';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { dateTime } from '../../components/time';
import './spawn-policy.css';
import { SaveFooter } from '../../components/SaveFooter';

type SpawnPolicy = HubApi.components['schemas']['SpawnPolicy'];
type SpawnPolicyRequest = HubApi.components['schemas']['SpawnPolicyRequest'];

const list = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/**
 * The workspace's spawn policy: whether agents may be spawned through the hub, with which models,
 * capabilities and command keys, and how many may run on one host. Everyone reads it; owners and admins
 * change it (the whole policy is replaced and audited as `spawn_policy.updated`).
 */
export function SpawnPolicyPage() {
  const { workspace, role } = useWorkspace();
  const { hub } = useClients();
  const path = { workspace: workspace.id };
  const policy = useApi(
    (signal) =>
      hub.raw.GET('/api/v1/workspaces/{workspace}/spawn-policy', { params: { path }, signal }).then(unwrap),
    [workspace.id],
  );
  const models = useApi((signal) => hub.raw.GET('/api/v1/provider-models', { signal }).then(unwrap), []);
  const editable = roleAllows(role, MANAGERS);

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Spawn policy</h1>
      <p className="muted">
        Whether owners, admins, keys and the Workflow API may have the hub start agents on spawn-ready runtime
        hosts of this workspace. Projects may override it through the API.
      </p>
      <ProblemMessage error={policy.error} context="The policy could not be loaded" />
      <ProblemMessage error={models.error} context="The model catalog could not be loaded" />
      {!policy.data ? (
        !policy.error && <Loading what="Loading the spawn policy" />
      ) : (
        <PolicyForm
          policy={policy.data}
          catalog={models.data?.map((m) => m.id) ?? []}
          editable={editable}
          onSave={async (body) => {
            const saved = await hub.raw
              .PUT('/api/v1/workspaces/{workspace}/spawn-policy', { params: { path }, body })
              .then(unwrap);
            policy.reload();
            return saved;
          }}
        />
      )}
    </section>
  );
}

function PolicyForm(props: {
  policy: SpawnPolicy;
  catalog: string[];
  editable: boolean;
  onSave: (body: SpawnPolicyRequest) => Promise<SpawnPolicy>;
}) {
  const { policy, editable } = props;
  const ids = { enabled: useId(), models: useId(), caps: useId(), keys: useId(), max: useId() };
  const [enabled, setEnabled] = useState(policy.enabled);
  const [models, setModels] = useState<string[]>(policy.allowed_models);
  const [capabilities, setCapabilities] = useState(policy.allowed_capabilities.join(', '));
  const [commandKeys, setCommandKeys] = useState(policy.allowed_command_keys.join(', '));
  const [max, setMax] = useState(String(policy.max_running_agents_per_host));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [saved, setSaved] = useState<string>();
  useEffect(() => {
    setSaved(undefined);
  }, [enabled, models, capabilities, commandKeys, max]);

  // The catalog's models plus any the policy names that left the catalog (shown so they can be removed).
  const choices = [...new Set([...props.catalog, ...policy.allowed_models])];
  const toggleModel = (id: string, on: boolean) =>
    setModels((current) => (on ? [...current, id] : current.filter((m) => m !== id)));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await props.onSave({
        enabled,
        allowed_models: models,
        allowed_capabilities: list(capabilities),
        allowed_command_keys: list(commandKeys).length ? list(commandKeys) : ['default'],
        max_running_agents_per_host: Number(max),
      });
      setSaved(`Saved: spawning is ${result.enabled ? 'on' : 'off'}.`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="policy-form" onSubmit={(e) => void submit(e)}>
      <p
        className={policy.enabled ? 'policy-state policy-on' : 'policy-state policy-off'}
        data-testid="policy-state"
      >
        Spawning is <strong>{policy.enabled ? 'on' : 'off'}</strong>
        {policy.stored ? ` · last changed ${dateTime(policy.updated_at)}` : ' · never set (the default)'}
      </p>
      <fieldset disabled={!editable || busy}>
        <legend className="visually-hidden">Spawn policy rules</legend>
        <span className="form-check">
          <input
            id={ids.enabled}
            type="checkbox"
            checked={enabled}
            onChange={(e) => setEnabled(e.target.checked)}
          />
          <label htmlFor={ids.enabled}>Allow spawning agents</label>
        </span>
        <fieldset className="model-choices" aria-describedby={`${ids.models}-hint`}>
          <legend>Allowed models</legend>
          <p id={`${ids.models}-hint`} className="hint">
            The first one checked is the model of a spawn that names none.
          </p>
          {choices.length === 0 && <p className="muted">The model catalog is empty.</p>}
          {choices.map((id) => (
            <span key={id} className="form-check">
              <input
                id={`${ids.models}-${id}`}
                type="checkbox"
                checked={models.includes(id)}
                onChange={(e) => toggleModel(id, e.target.checked)}
              />
              <label htmlFor={`${ids.models}-${id}`}>
                <code>{id}</code>
              </label>
            </span>
          ))}
        </fieldset>
        <div className="form-grid">
          <label htmlFor={ids.caps}>Allowed capabilities</label>
          <input
            id={ids.caps}
            value={capabilities}
            onChange={(e) => setCapabilities(e.target.value)}
            placeholder="comma-separated, e.g. report, review"
          />
          <label htmlFor={ids.keys}>Allowed command keys</label>
          <input id={ids.keys} value={commandKeys} onChange={(e) => setCommandKeys(e.target.value)} />
          <label htmlFor={ids.max}>Most running agents per host</label>
          <input
            id={ids.max}
            type="number"
            min={1}
            max={1000}
            value={max}
            onChange={(e) => setMax(e.target.value)}
          />
        </div>
      </fieldset>
      <SaveFooter
        editable={editable}
        busy={busy}
        label="Save policy"
        readOnly="Only owners and admins change the spawn policy."
        saved={saved}
        error={error}
        errorContext="The policy was not saved"
      />
    </form>
  );
}
