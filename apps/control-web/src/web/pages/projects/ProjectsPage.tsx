import { useState } from 'react';
import { Link } from 'react-router';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { useApi } from '../../app/hooks';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { dateTime } from '../../components/time';
import { CardTable } from '../../components/CardTable';
import { useCanEdit } from './project';
import { ProjectTeamsDialog } from './ProjectTeamsDialog';
import './projects.css';

type Project = HubApi.components['schemas']['Project'];

/** What the project codes allow, said in words (the form checks it before sending). */
const CODE_RULE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;

/**
 * The workspace's projects, each opening its workflow: create, rename, archive (and bring back) and assign
 * teams. Archived projects are hidden unless asked for. Projects of the same name are told apart by their code,
 * which is unique in the workspace and shown beside the name everywhere.
 */
export function ProjectsPage() {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  const canEdit = useCanEdit();
  const [showArchived, setShowArchived] = useState(false);
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<Project | undefined>(undefined);
  const [archiving, setArchiving] = useState<Project | undefined>(undefined);
  const [teamsOf, setTeamsOf] = useState<Project | undefined>(undefined);
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [actionError, setActionError] = useState<unknown>(undefined);
  const projects = useApi(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace: workspace.id }, query: { include_archived: showArchived } },
          signal,
        })
        .then(unwrap),
    [workspace.id, showArchived],
  );
  const base = `/w/${workspace.slug}/projects`;
  const sameName = (p: Project) => (projects.data ?? []).filter((o) => o.name === p.name).length > 1;

  const unarchive = async (project: Project) => {
    setActionError(undefined);
    try {
      unwrap(
        await hub.raw.POST('/api/v1/projects/{projectId}/unarchive', {
          params: { path: { projectId: project.id } },
        }),
      );
      projects.reload();
    } catch (error) {
      setActionError(error);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Projects</h1>
      <p className="muted">
        A project's workflow: the contracts that route intents, the artifact schemas their results must
        follow, and the invocations with their stage timelines.
      </p>
      <div className="toolbar">
        {canEdit && (
          <button
            type="button"
            className="button-primary"
            onClick={() => {
              setCode('');
              setName('');
              setCreating(true);
            }}
          >
            New project
          </button>
        )}
        <label className="inline-check">
          <input
            type="checkbox"
            checked={showArchived}
            onChange={(e) => setShowArchived(e.currentTarget.checked)}
          />{' '}
          Show archived projects
        </label>
      </div>
      <ProblemMessage error={actionError} context="The project was not changed" />
      {projects.loading && !projects.data && <Loading what="Loading projects" />}
      <ProblemMessage error={projects.error} context="Projects could not be loaded" />
      {projects.data && projects.data.length === 0 && (
        <p>{showArchived ? 'No projects yet.' : 'No active projects.'}</p>
      )}
      {projects.data && projects.data.length > 0 && (
        <CardTable wide>
          <caption className="visually-hidden">Projects of {workspace.name}</caption>
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Code</th>
              <th scope="col">Created</th>
              <th scope="col">Workflow</th>
              {canEdit && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {projects.data.map((project) => (
              <tr key={project.id} data-testid={`project-${project.code}`}>
                <td>
                  <Link to={`${base}/${project.id}/contracts`} title={project.id}>
                    {project.name}
                  </Link>
                  {sameName(project) && <span className="muted small"> ({project.code})</span>}
                  {project.archived_at && (
                    <span className="badge" title={`Archived ${dateTime(project.archived_at)}`}>
                      archived
                    </span>
                  )}
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
                    aria-label={`Invocations of ${project.name} (${project.code})`}
                  >
                    Invocations
                  </Link>
                </td>
                {canEdit && (
                  <td className="link-row">
                    <button
                      type="button"
                      aria-label={`Rename ${project.name} (${project.code})`}
                      onClick={() => {
                        setName(project.name);
                        setRenaming(project);
                      }}
                    >
                      Rename
                    </button>
                    <button
                      type="button"
                      aria-label={`Teams of ${project.name} (${project.code})`}
                      onClick={() => setTeamsOf(project)}
                    >
                      Teams
                    </button>
                    {project.archived_at ? (
                      <button
                        type="button"
                        aria-label={`Unarchive ${project.name} (${project.code})`}
                        onClick={() => void unarchive(project)}
                      >
                        Unarchive
                      </button>
                    ) : (
                      <button
                        type="button"
                        className="button-danger"
                        aria-label={`Archive ${project.name} (${project.code})`}
                        onClick={() => setArchiving(project)}
                      >
                        Archive
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </CardTable>
      )}

      <ConfirmDialog
        open={creating}
        title="New project"
        confirmLabel="Create project"
        onConfirm={async () => {
          if (!CODE_RULE.test(code.trim())) {
            throw new Error(
              'The code is 1 to 40 letters, digits, hyphens or underscores, starting with a letter or digit.',
            );
          }
          if (!name.trim()) throw new Error('Give the project a name.');
          unwrap(
            await hub.raw.POST('/api/v1/workspaces/{workspace}/projects', {
              params: { path: { workspace: workspace.id } },
              body: { code: code.trim(), name: name.trim() },
            }),
          );
          projects.reload();
        }}
        onClose={() => setCreating(false)}
      >
        <label htmlFor="project-name">Name</label>
        <input
          id="project-name"
          value={name}
          maxLength={200}
          onChange={(e) => setName(e.currentTarget.value)}
        />
        <label htmlFor="project-code">Code</label>
        <input
          id="project-code"
          value={code}
          maxLength={40}
          aria-describedby="project-code-help"
          onChange={(e) => setCode(e.currentTarget.value)}
        />
        <p id="project-code-help" className="muted small">
          Unique in the workspace and never changed: it tells projects of the same name apart. Letters,
          digits, hyphens and underscores.
        </p>
      </ConfirmDialog>

      <ConfirmDialog
        open={renaming !== undefined}
        title="Rename project"
        confirmLabel="Rename"
        onConfirm={async () => {
          if (!renaming) return;
          if (!name.trim()) throw new Error('Give the project a name.');
          unwrap(
            await hub.raw.PATCH('/api/v1/projects/{projectId}', {
              params: { path: { projectId: renaming.id } },
              body: { name: name.trim() },
            }),
          );
          projects.reload();
        }}
        onClose={() => setRenaming(undefined)}
      >
        <p>
          The code <code>{renaming?.code}</code> stays as it is.
        </p>
        <label htmlFor="project-new-name">New name</label>
        <input
          id="project-new-name"
          value={name}
          maxLength={200}
          onChange={(e) => setName(e.currentTarget.value)}
        />
      </ConfirmDialog>

      <ConfirmDialog
        open={archiving !== undefined}
        title="Archive project"
        confirmLabel="Archive project"
        danger
        onConfirm={async () => {
          if (!archiving) return;
          unwrap(
            await hub.raw.POST('/api/v1/projects/{projectId}/archive', {
              params: { path: { projectId: archiving.id } },
            }),
          );
          projects.reload();
        }}
        onClose={() => setArchiving(undefined)}
      >
        <p>
          Archive {archiving?.name} (<code>{archiving?.code}</code>)? It is hidden from the list and takes no
          new invocations; its contracts, invocations and artifacts stay readable, and runs already started go
          on. You can unarchive it later.
        </p>
      </ConfirmDialog>

      {teamsOf && <ProjectTeamsDialog project={teamsOf} onClose={() => setTeamsOf(undefined)} />}
    </section>
  );
}
