import { Link } from 'react-router';
import { navRoutes } from '../../app/routes';
import { roleAllows } from '../../app/roles';
import { useWorkspaceProjects } from '../../app/projects';
import { useSession } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { CopyButton } from '../../components/CopyButton';
import { dateTime } from '../../components/time';
import { AttentionList } from './AttentionList';
import { DeliveryProblems } from './DeliveryProblems';
import { SummaryCards } from './SummaryCards';
import './overview.css';

/**
 * The workspace's home: hosts ready to spawn and agents online (live), the invocations needing attention,
 * the deliveries' operational events (a subscription disabled, a delivery out of retries),
 * the projects, where to go next, and who you are here.
 */
export function OverviewPage() {
  const { workspace, role } = useWorkspace();
  const { state } = useSession();
  const projects = useWorkspaceProjects();
  const participant = state.status === 'signed-in' ? state.me.participant : undefined;
  const base = `/w/${workspace.slug}`;

  return (
    <section aria-labelledby="page-title" className="page-overview">
      <h1 id="page-title">{workspace.name}</h1>
      <p className="muted">
        Signed in as {participant ? `${participant.display_name} <${participant.email}>` : '—'}, {role} of{' '}
        <code>{workspace.slug}</code>.
      </p>

      <SummaryCards />

      <h2>Needs attention</h2>
      {projects.data && projects.data.length === 0 && <p>No projects, so no invocations yet.</p>}
      {projects.data && projects.data.length > 0 && <AttentionList projects={projects.data} />}

      <h2>Deliveries</h2>
      {projects.data && projects.data.length > 0 && <DeliveryProblems projects={projects.data} />}

      <h2>Projects</h2>
      {projects.loading && !projects.data && <Loading what="Loading projects" />}
      <ProblemMessage error={projects.error} context="Projects could not be loaded" />
      {projects.data && projects.data.length === 0 && <p>No projects yet.</p>}
      {projects.data && projects.data.length > 0 && (
        <table>
          <caption className="visually-hidden">Projects of {workspace.name}</caption>
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Code</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {projects.data.map((project) => (
              <tr key={project.id}>
                <td>
                  <Link to={`${base}/projects/${project.id}/invocations`} title={project.id}>
                    {project.name}
                  </Link>
                </td>
                <td>
                  <code>{project.code}</code>
                </td>
                <td>{dateTime(project.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

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

      <h2>Workspace</h2>
      <dl className="facts">
        <dt>Name</dt>
        <dd>
          <span className="named" title={workspace.id}>
            {workspace.name}
          </span>{' '}
          <CopyButton text={workspace.id} label="Copy workspace id" />
        </dd>
        <dt>Your role</dt>
        <dd>{role}</dd>
        <dt>Created</dt>
        <dd>{dateTime(workspace.created_at)}</dd>
      </dl>
    </section>
  );
}
