import { Link, useSearchParams } from 'react-router';
import type { HubApi, WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { useApi } from '../../app/hooks';
import { MANAGERS, roleAllows } from '../../app/roles';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { ago } from '../../components/time';
import { matches } from './match';

type Project = HubApi.components['schemas']['Project'];
type Invocation = WorkflowApi.components['schemas']['InvocationsInvocationSummary'];
type Contract = WorkflowApi.components['schemas']['ContractsContract'];

/** Invocations shown per project: the newest that match. */
const INVOCATIONS_PER_PROJECT = 10;

interface Found {
  projects: Project[];
  agents: HubApi.components['schemas']['Agent'][];
  keys: HubApi.components['schemas']['ApiKey'][];
  contracts: { project: Project; contract: Contract }[];
  invocations: { project: Project; invocation: Invocation }[];
  /** Lists the role may not read, or that failed, by name. */
  unavailable: string[];
}

/**
 * Search by id or name across the workspace: projects, agents, API keys (owners and admins), contracts and
 * invocations. Invocations are paginated on the server, so the Workflow API searches them (`q`, per project);
 * the other lists are short and are filtered here.
 */
export function SearchPage() {
  const [params] = useSearchParams();
  const q = (params.get('q') ?? '').trim();
  const { workspace, role } = useWorkspace();
  const { hub, workflow } = useClients();
  const canListKeys = roleAllows(role, MANAGERS);
  const base = `/w/${workspace.slug}`;
  const found = useApi<Found | undefined>(
    async (signal) => {
      if (!q) return undefined;
      const unavailable: string[] = [];
      const quietly = async <T,>(what: string, load: Promise<T[]>): Promise<T[]> => {
        try {
          return await load;
        } catch {
          unavailable.push(what);
          return [];
        }
      };
      const path = { params: { path: { workspace: workspace.id } }, signal };
      const [projects, agents, keys] = await Promise.all([
        quietly(
          'projects',
          hub.raw
            .GET('/api/v1/workspaces/{workspace}/projects', {
              params: { path: { workspace: workspace.id }, query: { include_archived: true } },
              signal,
            })
            .then(unwrap),
        ),
        quietly('agents', hub.raw.GET('/api/v1/workspaces/{workspace}/agents', path).then(unwrap)),
        canListKeys
          ? quietly('API keys', hub.raw.GET('/api/v1/workspaces/{workspace}/api-keys', path).then(unwrap))
          : Promise.resolve([]),
      ]);
      const perProject = await Promise.all(
        projects.map(async (project) => {
          const [contracts, invocations] = await Promise.all([
            quietly(
              'contracts',
              workflow.raw
                .GET('/api/v1/projects/{projectId}/workflow/contracts', {
                  params: { path: { projectId: project.id }, query: { include_inactive: true, limit: 500 } },
                  signal,
                })
                .then(unwrap),
            ),
            quietly(
              'invocations',
              workflow.raw
                .GET('/api/v1/projects/{projectId}/workflow/invocations', {
                  params: { path: { projectId: project.id }, query: { q, limit: INVOCATIONS_PER_PROJECT } },
                  signal,
                })
                .then((r) => unwrap({ ...r, data: r.data ? { data: r.data.data } : undefined })),
            ),
          ]);
          return {
            contracts: contracts
              .filter((c) => matches(q, c.contract_id, c.name))
              .map((contract) => ({ project, contract })),
            invocations: invocations.map((invocation) => ({ project, invocation })),
          };
        }),
      );
      return {
        projects: projects.filter((p) => matches(q, p.id, p.name, p.code)),
        agents: agents.filter((a) => matches(q, a.id, a.name)),
        keys: keys.filter((k) => matches(q, k.id, k.name)),
        contracts: perProject.flatMap((p) => p.contracts),
        invocations: perProject
          .flatMap((p) => p.invocations)
          .sort((a, b) => b.invocation.created_at.localeCompare(a.invocation.created_at)),
        unavailable: [...new Set(unavailable)],
      };
    },
    [workspace.id, q, canListKeys],
  );
  const r = found.data;
  const total = r
    ? r.projects.length + r.agents.length + r.keys.length + r.contracts.length + r.invocations.length
    : 0;

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Search</h1>
      {!q && <p>Type an id or a name in the search box above.</p>}
      {q && found.loading && <Loading what={`Searching for “${q}”`} />}
      <ProblemMessage error={found.error} context="The search failed" />
      {q && r && (
        <p role="status">
          {total === 0 ? `Nothing matches “${q}”.` : `${total} result${total === 1 ? '' : 's'} for “${q}”.`}
          {r.unavailable.length > 0 && ` Not searched (not available to you): ${r.unavailable.join(', ')}.`}
        </p>
      )}
      {r && r.invocations.length > 0 && (
        <>
          <h2>Invocations</h2>
          <ul className="link-list" data-testid="search-invocations">
            {r.invocations.map(({ project, invocation }) => (
              <li key={invocation.invocation_id}>
                <Link
                  to={`${base}/projects/${project.id}/invocations/${invocation.invocation_id}`}
                  title={invocation.invocation_id}
                >
                  {invocation.intent.trim() ? invocation.intent : '(no intent text)'}
                </Link>{' '}
                <span className="muted small">
                  {project.name} ({project.code}) · {invocation.state.replace(/_/g, ' ')} ·{' '}
                  {ago(invocation.created_at)}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      {r && r.projects.length > 0 && (
        <>
          <h2>Projects</h2>
          <ul className="link-list" data-testid="search-projects">
            {r.projects.map((p) => (
              <li key={p.id}>
                <Link to={`${base}/projects/${p.id}/contracts`} title={p.id}>
                  {p.name}
                </Link>{' '}
                <code className="small">{p.code}</code>
                {p.archived_at && <span className="muted small"> archived</span>}
              </li>
            ))}
          </ul>
        </>
      )}
      {r && r.agents.length > 0 && (
        <>
          <h2>Agents</h2>
          <ul className="link-list" data-testid="search-agents">
            {r.agents.map((a) => (
              <li key={a.id}>
                <Link to={`${base}/agents/${a.id}`} title={a.id}>
                  {a.name}
                </Link>{' '}
                <span className="muted small">{a.status}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {r && r.contracts.length > 0 && (
        <>
          <h2>Contracts</h2>
          <ul className="link-list" data-testid="search-contracts">
            {r.contracts.map(({ project, contract }) => (
              <li key={contract.contract_id}>
                <Link
                  to={`${base}/projects/${project.id}/contracts/${contract.contract_id}`}
                  title={contract.contract_id}
                >
                  {contract.name}
                </Link>{' '}
                <span className="muted small">
                  {project.name} ({project.code}){contract.is_active ? '' : ' · retired'}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      {r && r.keys.length > 0 && (
        <>
          <h2>API keys</h2>
          <ul className="link-list" data-testid="search-keys">
            {r.keys.map((k) => (
              <li key={k.id}>
                <Link to={`${base}/settings/api-keys`} title={k.id}>
                  {k.name}
                </Link>
                {k.revoked_at && <span className="muted small"> revoked</span>}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
