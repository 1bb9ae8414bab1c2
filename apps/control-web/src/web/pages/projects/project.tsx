import { NavLink, useParams } from 'react-router';
import type { ReactNode } from 'react';
import { unwrap } from '../../app/api';
import { useApi } from '../../app/hooks';
import { useClients } from '../../app/session';
import { roleAllows, EDITORS } from '../../app/roles';
import { useWorkspace } from '../../app/workspace';
import './projects.css';

/** The `:projectId` of the address. */
export function useProjectId(): string {
  const { projectId } = useParams();
  if (!projectId) throw new Error('a project page needs :projectId');
  return projectId;
}

/** Whether the signed-in participant may change the project's workflow objects (owner, admin, member). */
export function useCanEdit(): boolean {
  return roleAllows(useWorkspace().role, EDITORS);
}

/** Links inside the project, below `/w/<workspace>/projects/<id>`. */
export function useProjectBase(): string {
  const { workspace } = useWorkspace();
  return `/w/${workspace.slug}/projects/${useProjectId()}`;
}

/** The project's hub record (name, code, archived), for headings; an archived project is read too. */
function useProject() {
  const projectId = useProjectId();
  const { hub } = useClients();
  const project = useApi(
    (signal) =>
      hub.raw.GET('/api/v1/projects/{projectId}', { params: { path: { projectId } }, signal }).then(unwrap),
    [projectId],
  );
  return project.data;
}

/**
 * The frame of every project page: the project as a breadcrumb, the page's `<h1>`, and the tabs of its
 * workflow (contracts, try an intent, artifact schemas, invocations, deliveries, run limits).
 */
export function ProjectFrame({ title, children }: { title: string; children: ReactNode }) {
  const { workspace } = useWorkspace();
  const project = useProject();
  const projectId = useProjectId();
  const base = useProjectBase();
  const tabs = [
    { to: `${base}/contracts`, label: 'Contracts' },
    { to: `${base}/intent`, label: 'Try an intent' },
    { to: `${base}/schemas`, label: 'Artifact schemas' },
    { to: `${base}/invocations`, label: 'Invocations' },
    { to: `${base}/deliveries`, label: 'Deliveries' },
    { to: `${base}/run-limits`, label: 'Run limits' },
  ];
  return (
    <section aria-labelledby="page-title" className="project-page">
      <p className="breadcrumb">
        <NavLink to={`/w/${workspace.slug}/projects`}>Projects</NavLink> ›{' '}
        {project ? (
          <>
            <span title={project.id}>{project.name}</span> <code>{project.code}</code>
            {project.archived_at && <span className="badge">archived</span>}
          </>
        ) : (
          <code>{projectId}</code>
        )}
      </p>
      <h1 id="page-title">{title}</h1>
      {project?.archived_at && (
        <p className="notice" role="note">
          This project is archived: its history stays readable, and it takes no new invocations until it is
          unarchived on the Projects page.
        </p>
      )}
      <nav aria-label="Project workflow" className="project-tabs">
        <ul>
          {tabs.map((tab) => (
            <li key={tab.to}>
              <NavLink to={tab.to}>{tab.label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      {children}
    </section>
  );
}
