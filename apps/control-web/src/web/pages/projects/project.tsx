import { NavLink, useParams } from 'react-router';
import type { ReactNode } from 'react';
import { useWorkspaceProjects } from '../../app/projects';
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

/** The project's hub record (name, code), for headings. */
function useProject() {
  const projectId = useProjectId();
  const projects = useWorkspaceProjects();
  return projects.data?.find((p) => p.id === projectId);
}

/**
 * The frame of every project page: the project as a breadcrumb, the page's `<h1>`, and the tabs of its
 * workflow (contracts, try an intent, artifact schemas, invocations, run limits).
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
    { to: `${base}/run-limits`, label: 'Run limits' },
  ];
  return (
    <section aria-labelledby="page-title" className="project-page">
      <p className="breadcrumb">
        <NavLink to={`/w/${workspace.slug}/projects`}>Projects</NavLink> ›{' '}
        {project ? (
          <>
            {project.name} <code>{project.code}</code>
          </>
        ) : (
          <code>{projectId}</code>
        )}
      </p>
      <h1 id="page-title">{title}</h1>
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
