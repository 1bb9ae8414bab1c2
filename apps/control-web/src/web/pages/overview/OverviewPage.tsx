import { useClients, useSession } from '../../app/session';
import { unwrap } from '../../app/api';
import { useApi } from '../../app/hooks';
import { navRoutes } from '../../app/routes';
import { roleAllows } from '../../app/roles';
import { useWorkspace } from '../../app/workspace';
import { Link } from 'react-router';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { dateTime } from '../../components/time';

/** The workspace's home: who you are here, what you may do, and its projects. */
export function OverviewPage() {
  const { workspace, role } = useWorkspace();
  const { state } = useSession();
  const { hub } = useClients();
  const projects = useApi(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace: workspace.id } },
          signal,
        })
        .then(unwrap),
    [workspace.id],
  );
  const participant = state.status === 'signed-in' ? state.me.participant : undefined;
  const base = `/w/${workspace.slug}`;

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{workspace.name}</h1>
      <dl className="facts">
        <dt>Workspace</dt>
        <dd>
          <code>{workspace.slug}</code> ({workspace.id})
        </dd>
        <dt>Signed in as</dt>
        <dd>{participant ? `${participant.display_name} <${participant.email}>` : '—'}</dd>
        <dt>Your role</dt>
        <dd>{role}</dd>
        <dt>Created</dt>
        <dd>{dateTime(workspace.created_at)}</dd>
      </dl>

      <h2>Go to</h2>
      <ul className="link-list">
        {navRoutes
          .filter((route) => route.path !== '' && roleAllows(role, route.roles))
          .map((route) => (
            <li key={route.path}>
              <Link to={`${base}/${route.path}`}>{route.nav!.label}</Link>
            </li>
          ))}
      </ul>

      <h2>Projects</h2>
      {projects.loading && !projects.data && <Loading what="Loading projects" />}
      <ProblemMessage error={projects.error} context="Projects could not be loaded" />
      {projects.data && projects.data.length === 0 && <p>No projects yet.</p>}
      {projects.data && projects.data.length > 0 && (
        <table>
          <caption className="visually-hidden">Projects of {workspace.name}</caption>
          <thead>
            <tr>
              <th scope="col">Code</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {projects.data.map((project) => (
              <tr key={project.id}>
                <td>
                  <code>{project.code}</code>
                </td>
                <td>{project.name}</td>
                <td>{dateTime(project.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
