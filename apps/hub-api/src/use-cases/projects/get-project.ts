import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { canSeeWorkspace } from '../../data/workspaces.access';

/** A project the actor can see; any other (or a missing one) is reported as not found. */
export async function getProject(deps: HubDeps, actor: Actor | undefined, projectId: string) {
  const project = await deps.db.project.findUnique({ where: { id: projectId } });
  if (!project || !(await canSeeWorkspace(deps.db, actor, project.workspaceId))) {
    throw new AppError({ status: 404, code: 'project_not_found', detail: `No project '${projectId}'.` });
  }
  return project;
}
