import { useEffect, useId, useState } from 'react';
import type { FormEvent } from 'react';
import { ACTOR_KINDS } from './filters';
import type { AuditFilters } from './filters';

/** Common actions, offered as suggestions; any action or prefix may be typed. */
const ACTION_SUGGESTIONS = [
  'api_key.*',
  'api_key.created',
  'api_key.revoked',
  'member.*',
  'credential.*',
  'runtime_host.*',
  'runtime_config.pulled',
  'agent.*',
  'project.*',
];

type Field = keyof AuditFilters;

/** The filter form: edits a copy and applies it on submit, so typing does not reload the log. */
export function AuditFilterForm({
  filters,
  errors,
  onApply,
  onClear,
}: {
  filters: AuditFilters;
  errors: Partial<Record<Field, string>>;
  onApply: (filters: AuditFilters) => void;
  onClear: () => void;
}) {
  const id = useId();
  const [draft, setDraft] = useState(filters);
  const applied = JSON.stringify(filters);
  useEffect(() => setDraft(JSON.parse(applied) as AuditFilters), [applied]);
  const set = (field: Field) => (event: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [field]: event.target.value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply(draft);
  };
  const described = (field: Field) =>
    errors[field] ? { 'aria-invalid': true, 'aria-describedby': `${id}-${field}-error` } : {};
  const error = (field: Field) =>
    errors[field] ? (
      <span id={`${id}-${field}-error`} className="field-error">
        {errors[field]}
      </span>
    ) : null;

  return (
    <form className="audit-filters" onSubmit={submit} aria-label="Audit log filters">
      <div className="field">
        <label htmlFor={`${id}-action`}>Action</label>
        <input
          id={`${id}-action`}
          list={`${id}-actions`}
          placeholder="api_key.* or api_key.created"
          value={draft.action}
          onChange={set('action')}
          {...described('action')}
        />
        <datalist id={`${id}-actions`}>
          {ACTION_SUGGESTIONS.map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
        {error('action')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-actor-kind`}>Actor kind</label>
        <select id={`${id}-actor-kind`} value={draft.actor_kind} onChange={set('actor_kind')}>
          <option value="">Any</option>
          {ACTOR_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind.replace('_', ' ')}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-actor-id`}>Actor id</label>
        <input
          id={`${id}-actor-id`}
          placeholder="participant, key or agent id"
          maxLength={128}
          value={draft.actor_id}
          onChange={set('actor_id')}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-target-type`}>Target type</label>
        <input
          id={`${id}-target-type`}
          placeholder="api_key"
          maxLength={64}
          value={draft.target_type}
          onChange={set('target_type')}
          {...described('target_type')}
        />
        {error('target_type')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-target-id`}>Target id</label>
        <input id={`${id}-target-id`} maxLength={128} value={draft.target_id} onChange={set('target_id')} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-since`}>From</label>
        <input id={`${id}-since`} type="datetime-local" value={draft.since} onChange={set('since')} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-until`}>Before</label>
        <input
          id={`${id}-until`}
          type="datetime-local"
          value={draft.until}
          onChange={set('until')}
          {...described('until')}
        />
        {error('until')}
      </div>
      <div className="filter-actions">
        <button type="submit" className="button-primary">
          Apply filters
        </button>
        <button type="button" onClick={onClear}>
          Clear
        </button>
      </div>
    </form>
  );
}
