import { unwrap } from '../../../app/api';
import { useApi } from '../../../app/hooks';
import { useClients } from '../../../app/session';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { dateTime } from '../../../components/time';
import { useProjectId } from '../project';

/** The published artifact: its payload and the immutable envelope around it (identities, hash, provenance). */
export function ArtifactView({ invocationId }: { invocationId: string }) {
  const projectId = useProjectId();
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
  const a = artifact.data;
  if (artifact.loading && !a) return <Loading what="Loading the artifact" />;
  if (!a) return <ProblemMessage error={artifact.error} context="The artifact could not be loaded" />;
  const { payload, ...envelope } = a;
  return (
    <div className="artifact">
      <p>{a.summary}</p>
      <dl className="facts">
        <dt>Artifact</dt>
        <dd>
          <code>{a.artifact_id}</code> version {a.version}
        </dd>
        <dt>Schema</dt>
        <dd>
          <code>
            {a.schema.name}@{a.schema.version}
          </code>
        </dd>
        <dt>Payload SHA-256</dt>
        <dd>
          <code className="hash">{a.payload_sha256}</code>
        </dd>
        <dt>Produced by</dt>
        <dd>
          {a.created_by.kind} <code>{a.created_by.id ?? '—'}</code> · {dateTime(a.created_at)}
        </dd>
        <dt>Template</dt>
        <dd>
          <code>
            {a.provenance.template.key}@{a.provenance.template.version}
          </code>{' '}
          · stages {a.provenance.stages.map((s) => s.key).join(' → ')}
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
      <div className="json-pair">
        <div>
          <h3>Payload</h3>
          <pre className="json" tabIndex={0} aria-label="Artifact payload">
            {JSON.stringify(payload, null, 2)}
          </pre>
        </div>
        <div>
          <h3>Envelope</h3>
          <pre className="json" tabIndex={0} aria-label="Artifact envelope without its payload">
            {JSON.stringify(envelope, null, 2)}
          </pre>
        </div>
      </div>
    </div>
  );
}
