import { useEffect, useMemo, useState } from 'react';
import { unwrap } from '../../../app/api';
import { useApi } from '../../../app/hooks';
import { NameOf } from '../../../app/names';
import { useClients } from '../../../app/session';
import { useWorkspace } from '../../../app/workspace';
import { CopyButton } from '../../../components/CopyButton';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { dateTime } from '../../../components/time';
import { useProjectId } from '../project';
import { PayloadFields } from './PayloadFields';
import type { FieldSchema } from './PayloadFields';

/** A link that downloads `text` as `fileName` (an object URL, released when the link goes). */
function DownloadLink({ text, fileName, label }: { text: string; fileName: string; label: string }) {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    const objectUrl = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
    setUrl(objectUrl);
    return () => URL.revokeObjectURL(objectUrl);
  }, [text]);
  if (!url) return null;
  return (
    <a className="button" href={url} download={fileName}>
      {label}
    </a>
  );
}

/**
 * The published artifact: its payload laid out as fields from its schema (titles and descriptions), with
 * copy and download of the JSON; the immutable envelope around it (identities, hash, provenance) folded
 * away until asked for.
 */
export function ArtifactView({ invocationId }: { invocationId: string }) {
  const projectId = useProjectId();
  const { workspace } = useWorkspace();
  const { workflow } = useClients();
  const artifact = useApi(
    (signal) =>
      workflow.raw
        .GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact', {
          params: { path: { projectId, invocationId } },
          signal,
        })
        .then(unwrap),
    [projectId, invocationId],
  );
  const schemaId = artifact.data?.schema.schema_id;
  const schema = useApi(
    async (signal) =>
      schemaId
        ? unwrap(
            await workflow.raw.GET('/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}', {
              params: { path: { workspaceId: workspace.id, schemaId } },
              signal,
            }),
          )
        : undefined,
    [workspace.id, schemaId],
  );
  const a = artifact.data;
  const texts = useMemo(() => {
    if (!a) return undefined;
    const { payload, ...envelope } = a;
    return {
      payload: JSON.stringify(payload, null, 2),
      envelope: JSON.stringify(envelope, null, 2),
      whole: JSON.stringify(a, null, 2),
    };
  }, [a]);
  if (artifact.loading && !a) return <Loading what="Loading the artifact" />;
  if (!a || !texts)
    return <ProblemMessage error={artifact.error} context="The artifact could not be loaded" />;
  const fileBase = `artifact-${a.schema.name}-${a.artifact_id}`;
  return (
    <div className="artifact">
      <p>{a.summary}</p>
      <section aria-labelledby="payload-title" className="payload panel">
        <div className="payload-head">
          <h3 id="payload-title">Payload</h3>
          <div className="payload-actions">
            <CopyButton text={texts.payload} label="Copy payload" />
            <DownloadLink text={texts.payload} fileName={`${fileBase}.json`} label="Download payload" />
          </div>
        </div>
        {schema.error !== undefined && (
          <p className="muted small">
            The schema could not be read, so the fields are named after their keys.
          </p>
        )}
        <PayloadFields value={a.payload} schema={schema.data?.json_schema as FieldSchema | undefined} />
        <details className="raw-json">
          <summary>Payload as JSON</summary>
          <pre className="json" tabIndex={0} aria-label="Artifact payload">
            {texts.payload}
          </pre>
        </details>
      </section>
      <dl className="facts">
        <dt>Schema</dt>
        <dd>
          {a.schema.name} version {a.schema.version}
        </dd>
        <dt>Produced by</dt>
        <dd>
          {a.created_by.kind === 'agent' ? 'agent' : 'API key'} <NameOf id={a.created_by.id} /> ·{' '}
          {dateTime(a.created_at)}
        </dd>
        <dt>Template</dt>
        <dd>
          {a.provenance.template.key} version {a.provenance.template.version} · stages{' '}
          {a.provenance.stages.map((s) => s.key).join(' → ')}
        </dd>
        {a.limitations.length > 0 && (
          <>
            <dt>Limitations</dt>
            <dd>
              <ul>
                {a.limitations.map((l, i) => (
                  <li key={i}>{l}</li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
      <details className="envelope">
        <summary>Envelope: identities, payload hash and provenance</summary>
        <dl className="facts">
          <dt>Artifact</dt>
          <dd>
            <code>{a.artifact_id}</code> version {a.version}
          </dd>
          <dt>Payload SHA-256</dt>
          <dd>
            <code className="hash">{a.payload_sha256}</code>
          </dd>
        </dl>
        <div className="payload-actions">
          <CopyButton text={texts.whole} label="Copy envelope" />
          <DownloadLink text={texts.whole} fileName={`${fileBase}-envelope.json`} label="Download envelope" />
        </div>
        <pre className="json json-wrap" tabIndex={0} aria-label="Artifact envelope without its payload">
          {texts.envelope}
        </pre>
      </details>
    </div>
  );
}
