import { useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { unwrap } from '../../../app/api';
import { useApi } from '../../../app/hooks';
import { useProjectArtifactSchemas } from '../../../app/artifact-schemas';
import { useClients } from '../../../app/session';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ProjectFrame, useCanEdit, useProjectBase, useProjectId } from '../project';
import { bodyFromForm, EMPTY_FORM, fieldOf, formFromContract, validateContract } from './contract-form';
import type { Contract, ContractForm, StageRow } from './contract-form';

/** Create a contract (`contracts/new`) or edit one; every field is checked against the contract's schema as typed. */
export function ContractEditPage() {
  const { contractId } = useParams();
  const projectId = useProjectId();
  const { workflow } = useClients();
  const existing = useApi(
    (signal) =>
      contractId
        ? workflow.raw
            .GET('/api/v1/projects/{projectId}/workflow/contracts/{contractId}', {
              params: { path: { projectId, contractId } },
              signal,
            })
            .then(unwrap)
        : Promise.resolve(undefined),
    [projectId, contractId],
  );
  const created = (useLocation().state as { created?: boolean } | null)?.created === true;
  const [savedRevision, setSavedRevision] = useState<number | undefined>(undefined);
  const title = contractId
    ? existing.data
      ? `Contract: ${existing.data.name}`
      : 'Contract'
    : 'New contract';
  const revision = existing.data?.revision;
  return (
    <ProjectFrame title={title}>
      {existing.loading && !existing.data && contractId && <Loading what="Loading the contract" />}
      <ProblemMessage error={existing.error} context="The contract could not be loaded" />
      {revision !== undefined && (savedRevision === revision || (created && revision === 1)) && (
        <p className="notice" role="status">
          {savedRevision === revision ? `Saved: revision ${revision}.` : 'Created.'}
        </p>
      )}
      {(!contractId || existing.data) && (
        <ContractEditor
          key={revision ?? 'new'}
          contract={existing.data}
          onSaved={(saved) => {
            setSavedRevision(saved);
            existing.reload();
          }}
        />
      )}
    </ProjectFrame>
  );
}

function ContractEditor({
  contract,
  onSaved,
}: {
  contract?: Contract;
  /** After a change is saved, with the contract's new revision. */
  onSaved: (revision: number) => void;
}) {
  const projectId = useProjectId();
  const base = useProjectBase();
  const canEdit = useCanEdit();
  const navigate = useNavigate();
  const { workflow } = useClients();
  const [form, setForm] = useState<ContractForm>(() => (contract ? formFromContract(contract) : EMPTY_FORM));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [serverError, setServerError] = useState<unknown>(undefined);
  const schemas = useProjectArtifactSchemas(projectId);

  const body = useMemo(() => bodyFromForm(form, contract), [form, contract]);
  const errors = useMemo(() => validateContract(body), [body]);
  const byField = useMemo(() => {
    const map = new Map<string, string[]>();
    for (const e of errors) {
      const field = fieldOf(e.path);
      map.set(field, [...(map.get(field) ?? []), e.message]);
    }
    return map;
  }, [errors]);

  const shown = (field: string) => (submitted || touched.has(field) ? byField.get(field) : undefined);
  const touch = (field: string) => setTouched((t) => (t.has(field) ? t : new Set(t).add(field)));
  const set = <K extends keyof ContractForm>(key: K, value: ContractForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    touch(key);
  };
  const setStage = (index: number, patch: Partial<StageRow>) =>
    setForm((f) => ({ ...f, stages: f.stages.map((s, i) => (i === index ? { ...s, ...patch } : s)) }));

  const save = async () => {
    setSubmitted(true);
    setServerError(undefined);
    if (errors.length > 0) {
      document.getElementById(`field-${fieldOf(errors[0]!.path)}`)?.focus();
      return;
    }
    setBusy(true);
    try {
      if (contract) {
        const updated = unwrap(
          await workflow.raw.PATCH('/api/v1/projects/{projectId}/workflow/contracts/{contractId}', {
            params: { path: { projectId, contractId: contract.contract_id } },
            body: body.fallback ? { ...body, classifier: {} } : body,
          }),
        );
        onSaved(updated.revision);
      } else {
        const created = unwrap(
          await workflow.raw.POST('/api/v1/projects/{projectId}/workflow/contracts', {
            params: { path: { projectId } },
            body,
          }),
        );
        navigate(`${base}/contracts/${created.contract_id}`, { state: { created: true } });
      }
    } catch (error) {
      setServerError(error);
    } finally {
      setBusy(false);
    }
  };

  const field = (
    name: string,
    label: string,
    input: (props: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ReactNode,
    hint?: string,
  ) => {
    const id = `field-${name}`;
    const messages = shown(name);
    const described = [hint ? `${id}-hint` : '', messages ? `${id}-error` : ''].filter(Boolean).join(' ');
    return (
      <div className={`field${messages ? ' field-invalid' : ''}`}>
        <label htmlFor={id}>{label}</label>
        {input({
          id,
          'aria-invalid': Boolean(messages),
          ...(described ? { 'aria-describedby': described } : {}),
        })}
        {hint && (
          <p id={`${id}-hint`} className="hint">
            {hint}
          </p>
        )}
        {messages && (
          <p id={`${id}-error`} className="field-error">
            {label} {messages.join('; ')}
          </p>
        )}
      </div>
    );
  };
  const text = (name: keyof ContractForm, label: string, hint?: string) =>
    field(
      name,
      label,
      (props) => (
        <input
          {...props}
          value={form[name] as string}
          disabled={!canEdit}
          onChange={(e) => set(name, e.currentTarget.value as never)}
          onBlur={() => touch(name)}
        />
      ),
      hint,
    );
  const versions = schemas.data?.filter((s) => s.name === form.schemaName && s.deprecated_at === null) ?? [];

  return (
    <form
      className="contract-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      {contract && (
        <p className="muted">
          <code>{contract.contract_id}</code> · revision {contract.revision} ·{' '}
          {contract.is_active ? 'active' : 'retired (retired contracts do not match intents)'}
        </p>
      )}
      <fieldset>
        <legend>Contract</legend>
        {text('name', 'Name')}
        {text('priority', 'Priority', 'A whole number; when several contracts match, the highest wins.')}
        <label className="inline">
          <input
            type="checkbox"
            checked={form.fallback}
            disabled={!canEdit}
            onChange={(e) => set('fallback', e.currentTarget.checked)}
          />{' '}
          Fallback: matches any intent (carries no criteria)
        </label>
      </fieldset>
      {!form.fallback && (
        <fieldset>
          <legend>Classifier</legend>
          {field(
            'phrases',
            'Intent phrases',
            (props) => (
              <textarea
                {...props}
                rows={3}
                value={form.phrases}
                disabled={!canEdit}
                onChange={(e) => set('phrases', e.currentTarget.value)}
                onBlur={() => touch('phrases')}
              />
            ),
            'One phrase a line; an intent containing any one of them matches.',
          )}
          {text(
            'classifierCapabilities',
            'Required capabilities',
            'Comma-separated; each must be requested.',
          )}
        </fieldset>
      )}
      <fieldset>
        <legend>Template</legend>
        <div className="field-row">
          {text('templateKey', 'Template key', 'Letters, digits, “.”, “_”, “:”, “-”.')}
          {text('templateVersion', 'Template version', 'No spaces; semantic versions recommended.')}
        </div>
        {text(
          'templateCapabilities',
          'Template capabilities',
          'Comma-separated; used by the implicit stage.',
        )}
        <div className="field-row">
          {text('schemaName', 'Artifact schema name')}
          {text('schemaVersion', 'Artifact schema version')}
        </div>
        {schemas.data && schemas.data.length > 0 && (
          <p className="hint">
            Registered:{' '}
            {schemas.data
              .filter((s) => s.deprecated_at === null)
              .map((s) => `${s.name}@${s.version}`)
              .join(', ')}
            {form.schemaName && versions.length === 0 && ' — none current under this name'}
          </p>
        )}
        <label className="inline">
          <input
            type="checkbox"
            checked={form.approval}
            disabled={!canEdit}
            onChange={(e) => set('approval', e.currentTarget.checked)}
          />{' '}
          A human (owner or admin) approves each run before it starts
        </label>
      </fieldset>
      <fieldset>
        <legend>Stages, in order</legend>
        <p className="hint">Without stages the template runs one implicit stage.</p>
        {form.stages.map((stage, index) => (
          <div className="stage-row" key={index}>
            <span className="stage-number" aria-hidden="true">
              {index + 1}
            </span>
            {(['key', 'title', 'capabilities'] as const).map((part) =>
              field(`stage-${index}-${part}`, `Stage ${index + 1} ${part}`, (props) => (
                <input
                  {...props}
                  value={stage[part]}
                  disabled={!canEdit}
                  onChange={(e) => {
                    setStage(index, { [part]: e.currentTarget.value });
                    touch(`stage-${index}-${part}`);
                  }}
                />
              )),
            )}
            {canEdit && (
              <button
                type="button"
                onClick={() => setForm((f) => ({ ...f, stages: f.stages.filter((_, i) => i !== index) }))}
              >
                Remove<span className="visually-hidden"> stage {index + 1}</span>
              </button>
            )}
          </div>
        ))}
        {canEdit && (
          <button
            type="button"
            onClick={() =>
              setForm((f) => ({ ...f, stages: [...f.stages, { key: '', title: '', capabilities: '' }] }))
            }
          >
            Add stage
          </button>
        )}
      </fieldset>
      {shown('form') && <p className="field-error">{shown('form')!.join('; ')}</p>}
      {submitted && errors.length > 0 && (
        <p className="field-error" role="alert">
          {attentionSummary(byField)}
        </p>
      )}
      <ProblemMessage error={serverError} context="The Workflow API refused the contract" />
      {canEdit && (
        <div className="form-actions">
          <button type="submit" className="button-primary" disabled={busy}>
            {busy ? 'Saving…' : contract ? 'Save changes' : 'Create contract'}
          </button>
        </div>
      )}
    </form>
  );
}

/**
 * The form's summary of what to fix: the number of fields marked (each field once, however many rules it
 * breaks), and the form-wide problem when there is one.
 */
function attentionSummary(byField: Map<string, string[]>): string {
  const marked = [...byField.keys()].filter((field) => field !== 'form').length;
  const parts: string[] = [];
  if (marked === 1) parts.push('One field needs attention before saving: it is marked below.');
  if (marked > 1) parts.push(`${marked} fields need attention before saving: each is marked below.`);
  if (byField.has('form')) parts.push('The contract as a whole needs a change, described below the stages.');
  return parts.join(' ');
}
