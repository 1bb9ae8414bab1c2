import { useMemo, useState } from 'react';
import type { WorkflowApi } from '@svc/sdk';
import { workflowDocument } from '@svc/contracts/documents';
import { unwrap } from '../../../app/api';
import { useApi } from '../../../app/hooks';
import { MANAGERS, roleAllows } from '../../../app/roles';
import { useProjectArtifactSchemas } from '../../../app/artifact-schemas';
import { useClients } from '../../../app/session';
import { useWorkspace } from '../../../app/workspace';
import { ConfirmDialog } from '../../../components/ConfirmDialog';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { dateTime } from '../../../components/time';
import { ProjectFrame, useProjectId } from '../project';
import { checkSchema } from '../schema-check';
import type { JsonSchema } from '../schema-check';
import { CardTable } from '../../../components/CardTable';

type Summary = WorkflowApi.components['schemas']['ArtifactSchemaSummary'];
const components = (workflowDocument.components ?? {}) as { schemas?: Record<string, JsonSchema> };

/** The project's artifact schema versions: register a version, read its JSON Schema, deprecate (final). */
export function ArtifactSchemasPage() {
  const projectId = useProjectId();
  // Registering and deprecating schemas is treated as destructive: owners and admins only.
  const { workspace, role } = useWorkspace();
  const canEdit = roleAllows(role, MANAGERS);
  const { workflow } = useClients();
  const [viewing, setViewing] = useState<string | undefined>(undefined);
  const [deprecating, setDeprecating] = useState<Summary | undefined>(undefined);
  const list = useProjectArtifactSchemas(projectId);
  const sorted = useMemo(
    () =>
      [...(list.data ?? [])].sort(
        (a, b) => a.name.localeCompare(b.name) || b.created_at.localeCompare(a.created_at),
      ),
    [list.data],
  );

  return (
    <ProjectFrame title="Artifact schemas">
      <p className="muted">
        Every invocation's artifact must conform to the schema version its template pins. A version never
        changes; an old one is deprecated (for good) and a new version registered.
      </p>
      {canEdit && <RegisterForm onRegistered={list.reload} />}
      <h2>Versions</h2>
      {list.loading && !list.data && <Loading what="Loading schemas" />}
      <ProblemMessage error={list.error} context="Schemas could not be loaded" />
      {list.data && list.data.length === 0 && <p>No schema registered in this project yet.</p>}
      {sorted.length > 0 && (
        <CardTable>
          <caption className="visually-hidden">Artifact schema versions</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Registered</th>
              <th scope="col">Hash</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((s) => (
              <SchemaRow
                key={s.id}
                schema={s}
                open={viewing === s.id}
                onToggle={() => setViewing(viewing === s.id ? undefined : s.id)}
                onDeprecate={canEdit && s.deprecated_at === null ? () => setDeprecating(s) : undefined}
              />
            ))}
          </tbody>
        </CardTable>
      )}
      <ConfirmDialog
        open={deprecating !== undefined}
        title="Deprecate schema version"
        confirmLabel="Deprecate version"
        danger
        onConfirm={async () => {
          unwrap(
            await workflow.raw.POST(
              '/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}/deprecate',
              {
                params: { path: { workspaceId: workspace.id, schemaId: deprecating!.id } },
              },
            ),
          );
          list.reload();
        }}
        onClose={() => setDeprecating(undefined)}
      >
        <p>
          Deprecate{' '}
          <code>
            {deprecating?.name}@{deprecating?.version}
          </code>
          ? This is final: there is no restore. Templates pinning it can no longer launch (preflight reports
          it); existing artifacts stay valid and checkable. Register a new version instead of changing it.
        </p>
      </ConfirmDialog>
    </ProjectFrame>
  );
}

function SchemaRow({
  schema: s,
  open,
  onToggle,
  onDeprecate,
}: {
  schema: Summary;
  open: boolean;
  onToggle: () => void;
  onDeprecate?: () => void;
}) {
  return (
    <>
      <tr>
        <td>
          <code>{s.name}</code>
        </td>
        <td>
          <code>{s.version}</code>
        </td>
        <td>
          {s.deprecated_at ? (
            <span className="badge badge-muted">deprecated {dateTime(s.deprecated_at)}</span>
          ) : (
            <span className="badge badge-ok">current</span>
          )}
        </td>
        <td>{dateTime(s.created_at)}</td>
        <td>
          <code className="hash" title={s.schema_hash}>
            {s.schema_hash.slice(0, 12)}…
          </code>
        </td>
        <td className="link-row">
          <button type="button" aria-expanded={open} onClick={onToggle}>
            {open ? 'Hide' : 'View'}
            <span className="visually-hidden">
              {' '}
              {s.name}@{s.version}
            </span>
          </button>
          {onDeprecate && (
            <button type="button" onClick={onDeprecate}>
              Deprecate
              <span className="visually-hidden">
                {' '}
                {s.name}@{s.version}
              </span>
            </button>
          )}
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={6}>
            <SchemaBody id={s.id} />
          </td>
        </tr>
      )}
    </>
  );
}

function SchemaBody({ id }: { id: string }) {
  const { workspace } = useWorkspace();
  const { workflow } = useClients();
  const detail = useApi(
    (signal) =>
      workflow.raw
        .GET('/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}', {
          params: { path: { workspaceId: workspace.id, schemaId: id } },
          signal,
        })
        .then(unwrap),
    [workspace.id, id],
  );
  if (detail.loading && !detail.data) return <Loading what="Loading the schema" />;
  return (
    <>
      <ProblemMessage error={detail.error} />
      {detail.data && (
        <pre className="json" tabIndex={0} aria-label="JSON Schema">
          {JSON.stringify(detail.data.json_schema, null, 2)}
        </pre>
      )}
    </>
  );
}

const STARTER = `{
  "type": "object",
  "required": ["summary"],
  "properties": {
    "summary": { "type": "string", "minLength": 1 }
  }
}`;

function RegisterForm({ onRegistered }: { onRegistered: () => void }) {
  const projectId = useProjectId();
  const { workspace } = useWorkspace();
  const { workflow } = useClients();
  const [name, setName] = useState('');
  const [version, setVersion] = useState('1.0.0');
  const [text, setText] = useState(STARTER);
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState<string | undefined>(undefined);

  const parsed = useMemo((): { value?: unknown; error?: string } => {
    try {
      return { value: JSON.parse(text) as unknown };
    } catch (e) {
      return { error: e instanceof Error ? e.message : 'is not JSON' };
    }
  }, [text]);
  const errors = useMemo(() => {
    const found = new Map<string, string>();
    const body = { project_id: projectId, name, version, json_schema: parsed.value ?? {} };
    const schema = components.schemas?.RegisterArtifactSchemaRequest;
    if (schema)
      for (const e of checkSchema(body, schema, components)) found.set(e.path.split('/')[1] ?? '', e.message);
    if (parsed.error) found.set('json_schema', `is not valid JSON: ${parsed.error}`);
    return found;
  }, [projectId, name, version, parsed]);
  const show = (key: string) => (touched ? errors.get(key) : undefined);

  const register = async () => {
    setTouched(true);
    setError(undefined);
    setDone(undefined);
    if (errors.size > 0) return;
    setBusy(true);
    try {
      const created = unwrap(
        await workflow.raw.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
          params: { path: { workspaceId: workspace.id } },
          body: {
            project_id: projectId,
            name,
            version,
            json_schema: parsed.value as Record<string, unknown>,
          },
        }),
      );
      setDone(`Registered ${created.name}@${created.version}.`);
      setTouched(false);
      onRegistered();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const input = (key: string, label: string, value: string, onChange: (v: string) => void) => (
    <div className={`field${show(key) ? ' field-invalid' : ''}`}>
      <label htmlFor={`schema-${key}`}>{label}</label>
      <input
        id={`schema-${key}`}
        value={value}
        aria-invalid={Boolean(show(key))}
        aria-describedby={show(key) ? `schema-${key}-error` : undefined}
        onChange={(e) => {
          onChange(e.currentTarget.value);
          setTouched(true);
        }}
      />
      {show(key) && (
        <p id={`schema-${key}-error`} className="field-error">
          {label} {show(key)}
        </p>
      )}
    </div>
  );

  return (
    <form
      className="panel register-schema"
      aria-labelledby="register-title"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void register();
      }}
    >
      <h2 id="register-title">Register a version</h2>
      <div className="field-row">
        {input('name', 'Name', name, setName)}
        {input('version', 'Version', version, setVersion)}
      </div>
      <div className={`field${show('json_schema') ? ' field-invalid' : ''}`}>
        <label htmlFor="schema-json_schema">JSON Schema (draft 2020-12)</label>
        <textarea
          id="schema-json_schema"
          className="code-input"
          rows={8}
          spellCheck={false}
          value={text}
          aria-invalid={Boolean(show('json_schema'))}
          aria-describedby={show('json_schema') ? 'schema-json_schema-error' : undefined}
          onChange={(e) => {
            setText(e.currentTarget.value);
            setTouched(true);
          }}
        />
        {show('json_schema') && (
          <p id="schema-json_schema-error" className="field-error">
            JSON Schema {show('json_schema')}
          </p>
        )}
      </div>
      <ProblemMessage error={error} context="The Workflow API refused the schema" />
      {done && (
        <p className="notice" role="status">
          {done}
        </p>
      )}
      <button type="submit" className="button-primary" disabled={busy}>
        {busy ? 'Registering…' : 'Register version'}
      </button>
    </form>
  );
}
