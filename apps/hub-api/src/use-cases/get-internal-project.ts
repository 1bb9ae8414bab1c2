import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../deps';

/**
 * A project with its workspace, for another service of the platform (service actor: it sees every
 * workspace, so there is no membership check here).
 */
export async function getInternalProject(deps: HubDeps, projectId: string) {
  const project = await deps.db.project.findUnique({
    where: { id: projectId },
    include: { workspace: { select: { id: true, slug: true } } },
  });
  if (!project) {
    throw new AppError({ status: 404, code: 'project_not_found', detail: `No project '${projectId}'.` });
  }
  return project;
}

export type InternalProject = Awaited<ReturnType<typeof getInternalProject>>;
