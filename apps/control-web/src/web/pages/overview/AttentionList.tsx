import { Link } from 'react-router';
import { APIError } from '@svc/sdk';
import type { HubApi, WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { usePolling } from '../../app/hooks';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { ago } from '../../components/time';

type Project = HubApi.components['schemas']['Project'];
type Attention = WorkflowApi.components['schemas']['InvocationsAttention'];
type Invocation = WorkflowApi.components['schemas']['InvocationsInvocationSummary'];

/** Every attention value but `none`: what a person should look at. */
const NEEDS_ATTENTION: Attention[] = [
  'approval_required',
  'blocked',
  'stalled',
  'artifact_rejected',
  'failed',
  'owner_spawning',
];
const PER_PROJECT = 5;

interface Row {
  project: Project;
  invocation: Invocation;
}

/**
 * The newest invocations needing attention across the workspace's projects (five per project at most), read
 * again every 15 s. A refusal of the Workflow API is reported as such, not as "nothing to do".
 */
export function AttentionList({ projects }: { projects: Project[] }) {
  const { workspace } = useWorkspace();
  const { workflow } = useClients();
  const ids = projects.map((p) => p.id).join(',');
  const rows = usePolling(
    async (signal) => {
      const pages = await Promise.all(
        projects.map((project) =>
          workflow.raw
            .GET('/api/v1/projects/{projectId}/workflow/invocations', {
              params: {
                path: { projectId: project.id },
                query: { attention: NEEDS_ATTENTION, limit: PER_PROJECT },
              },
              signal,
            })
            .then((result) =>
              unwrap({ ...result, data: result.data ? { data: result.data.data } : undefined }),
            )
            .then((invocations) => invocations.map((invocation): Row => ({ project, invocation }))),
        ),
      );
      return pages.flat().sort((a, b) => b.invocation.updated_at.localeCompare(a.invocation.updated_at));
    },
    15_000,
    [workspace.id, ids],
  );

  if (rows.error instanceof APIError && (rows.error.status === 401 || rows.error.status === 403)) {
    return (
      <p className="muted" role="note">
        The Workflow API does not list invocations for your session (code <code>{rows.error.code}</code>).
        Open a project to see its runs.
      </p>
    );
  }
  return (
    <>
      <ProblemMessage error={rows.error} context="Invocations could not be read" />
      {rows.loading && !rows.data && <Loading what="Looking for invocations needing attention" />}
      {rows.data && rows.data.length === 0 && (
        <p>Nothing needs attention: no invocation is blocked, stalled or failed.</p>
      )}
      {rows.data && rows.data.length > 0 && (
        <table>
          <caption className="visually-hidden">Invocations needing attention</caption>
          <thead>
            <tr>
              <th scope="col">Intent</th>
              <th scope="col">Project</th>
              <th scope="col">State</th>
              <th scope="col">Attention</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.data.map(({ project, invocation }) => (
              <tr key={invocation.invocation_id}>
                <td>
                  <Link
                    to={`/w/${workspace.slug}/projects/${project.id}/invocations/${invocation.invocation_id}`}
                    title={invocation.invocation_id}
                  >
                    {invocation.intent.trim()
                      ? invocation.intent.length > 80
                        ? `${invocation.intent.slice(0, 80)}…`
                        : invocation.intent
                      : '(no intent text) Open'}
                  </Link>
                </td>
                <td>
                  <Link to={`/w/${workspace.slug}/projects/${project.id}/invocations`} title={project.id}>
                    {project.name}
                  </Link>{' '}
                  <code className="muted small">{project.code}</code>
                </td>
                <td>{invocation.state.replace(/_/g, ' ')}</td>
                <td>
                  <span className="attention">{invocation.attention.replace(/_/g, ' ')}</span>
                  {invocation.attention_reason && (
                    <span className="muted"> · {invocation.attention_reason}</span>
                  )}
                </td>
                <td>{ago(invocation.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
