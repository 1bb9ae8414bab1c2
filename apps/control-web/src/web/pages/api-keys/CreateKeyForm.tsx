import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { ProblemMessage } from '../../components/ProblemMessage';
import {
  FAMILIES,
  PRESET_ABOUT,
  SCOPE_PRESETS,
  SCOPE_PRESET_NAMES,
  isDestructive,
  scopesByFamily,
} from './scope-catalog';
import type { ScopePreset } from './scope-catalog';
import { ScopeList } from './ScopeList';

export type CreatedApiKey = HubApi.components['schemas']['CreatedApiKey'];
type CreateRequest = HubApi.components['schemas']['CreateApiKeyRequest'];

const EXPIRY_CHOICES = [
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In 1 year' },
  { value: 'date', label: 'On a date…' },
  { value: 'never', label: 'Never' },
] as const;
type ExpiryChoice = (typeof EXPIRY_CHOICES)[number]['value'];

/** The expiry instant the choice means, or undefined for none; a chosen date expires at its end (local time). */
function expiryOf(choice: ExpiryChoice, date: string, now = new Date()): string | undefined {
  if (choice === 'never') return undefined;
  if (choice === 'date') {
    if (!date) return undefined;
    const end = new Date(`${date}T23:59:59`);
    return Number.isNaN(end.getTime()) ? undefined : end.toISOString();
  }
  return new Date(now.getTime() + Number(choice) * 86_400_000).toISOString();
}

/**
 * Creates a key from a preset or from explicit scopes, with an optional expiry. The secret in the answer goes
 * to `onCreated` and is kept only in the page's memory.
 */
export function CreateKeyForm({
  onCreated,
  onCancel,
}: {
  onCreated: (key: CreatedApiKey) => void;
  onCancel: () => void;
}) {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  const ids = useId();
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'preset' | 'scopes'>('preset');
  const [preset, setPreset] = useState<ScopePreset>('read-only');
  const [scopes, setScopes] = useState<ReadonlySet<string>>(new Set());
  const [expiry, setExpiry] = useState<ExpiryChoice>('90');
  const [date, setDate] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [invalid, setInvalid] = useState<string | undefined>(undefined);
  const groups = scopesByFamily();
  const destructive = [...scopes].filter(isDestructive);

  const toggle = (scope: string, on: boolean) =>
    setScopes((current) => {
      const next = new Set(current);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setInvalid(undefined);
    if (mode === 'scopes' && scopes.size === 0) return setInvalid('Choose at least one scope.');
    if (expiry === 'date' && !expiryOf(expiry, date)) return setInvalid('Choose the expiry date.');
    const body: CreateRequest = { name: name.trim() };
    if (mode === 'preset') body.preset = preset;
    else body.scopes = [...scopes].sort();
    const expiresAt = expiryOf(expiry, date);
    if (expiresAt) body.expires_at = expiresAt;
    setBusy(true);
    try {
      const created = await hub.raw
        .POST('/api/v1/workspaces/{workspace}/api-keys', {
          params: { path: { workspace: workspace.id } },
          body,
        })
        .then(unwrap);
      onCreated(created);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="key-form" onSubmit={(e) => void submit(e)} aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>New API key</h2>
      <label htmlFor={`${ids}-name`}>Name</label>
      <input
        id={`${ids}-name`}
        required
        maxLength={200}
        value={name}
        onChange={(e) => setName(e.target.value)}
        aria-describedby={`${ids}-name-help`}
      />
      <p id={`${ids}-name-help`} className="help">
        Say who or what uses it, e.g. “CI deploy” or “runtime host eu-1”.
      </p>

      <fieldset>
        <legend>Access</legend>
        <label className="choice">
          <input
            type="radio"
            name={`${ids}-mode`}
            checked={mode === 'preset'}
            onChange={() => setMode('preset')}
          />
          From a preset
        </label>
        <label className="choice">
          <input
            type="radio"
            name={`${ids}-mode`}
            checked={mode === 'scopes'}
            onChange={() => setMode('scopes')}
          />
          Explicit scopes
        </label>
      </fieldset>

      {mode === 'preset' ? (
        <fieldset className="presets">
          <legend>Preset</legend>
          {SCOPE_PRESET_NAMES.map((name) => (
            <label key={name} className="preset">
              <input
                type="radio"
                name={`${ids}-preset`}
                value={name}
                checked={preset === name}
                onChange={() => setPreset(name)}
              />
              <span>
                <strong>{PRESET_ABOUT[name].label}</strong> <code>{name}</code>
                <span className="help">{PRESET_ABOUT[name].about}</span>
              </span>
            </label>
          ))}
          <p className="help">
            Grants: <ScopeList scopes={SCOPE_PRESETS[preset]} />
          </p>
        </fieldset>
      ) : (
        <div className="scope-families">
          {FAMILIES.map(({ family, title, rule }) => (
            <fieldset key={family} className={`scope-family scope-family-${family}`}>
              <legend>{title}</legend>
              <p className="help">{rule}</p>
              {groups[family].map((scope) => (
                <label key={scope} className="choice">
                  <input
                    type="checkbox"
                    checked={scopes.has(scope)}
                    onChange={(e) => toggle(scope, e.target.checked)}
                  />
                  <code>{scope}</code>
                </label>
              ))}
            </fieldset>
          ))}
        </div>
      )}
      {destructive.length > 0 && (
        <p className="warning" role="note">
          This key will hold destructive or privileged scopes ({destructive.join(', ')}). Give it a named
          owner and a rotation plan, and keep it apart from everyday keys.
        </p>
      )}

      <label htmlFor={`${ids}-expiry`}>Expires</label>
      <select id={`${ids}-expiry`} value={expiry} onChange={(e) => setExpiry(e.target.value as ExpiryChoice)}>
        {EXPIRY_CHOICES.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
      {expiry === 'date' && (
        <>
          <label htmlFor={`${ids}-date`}>Expiry date</label>
          <input id={`${ids}-date`} type="date" value={date} onChange={(e) => setDate(e.target.value)} />
        </>
      )}

      {invalid && (
        <p className="problem" role="alert">
          {invalid}
        </p>
      )}
      <ProblemMessage error={error} context="The key was not created" />
      <div className="form-actions">
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="button-primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
    </form>
  );
}
