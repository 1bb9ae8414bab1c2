import { Link } from 'react-router';
import { useWorkspaceProjects } from '../../app/projects';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { dateTime } from '../../components/time';
import './projects.css';
import { CardTable } from '../../components/CardTable';

/** The workspace's projects, each opening its workflow: contracts, intents, artifact schemas, invocations. */
export function ProjectsPage() {
  const { workspace } = useWorkspace();
  const projects = useWorkspaceProjects();
  const base = `/w/${workspace.slug}/projects`;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Projects</h1>
      <p className="muted">
        A project's workflow: the contracts that route intents, the artifact schemas their results must
        follow, and the invocations with their stage timelines.
      </p>
      {projects.loading && !projects.data && <Loading what="Loading projects" />}
      <ProblemMessage error={projects.error} context="Projects could not be loaded" />
      {projects.data && projects.data.length === 0 && <p>No projects yet.</p>}
      {projects.data && projects.data.length > 0 && (
        <CardTable>
          <caption className="visually-hidden">Projects of {workspace.name}</caption>
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Code</th>
              <th scope="col">Created</th>
              <th scope="col">Workflow</th>
            </tr>
          </thead>
          <tbody>
            {projects.data.map((project) => (
              <tr key={project.id}>
                <td>
                  <Link to={`${base}/${project.id}/contracts`}>{project.name}</Link>
                </td>
                <td>
                  <code>{project.code}</code>
                </td>
                <td>{dateTime(project.created_at)}</td>
                <td className="link-row">
                  <Link to={`${base}/${project.id}/intent`} aria-label={`Try an intent in ${project.name}`}>
                    Try an intent
                  </Link>
                  <Link
                    to={`${base}/${project.id}/invocations`}
                    aria-label={`Invocations of ${project.name}`}
                  >
                    Invocations
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </CardTable>
      )}
    </section>
  );
}
