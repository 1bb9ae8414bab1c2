import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { ParticipantRole } from '@svc/service-kit';
import type { Db } from '../db';
import type { HubDeps } from '../deps';
import type { Project } from '../generated/prisma/client';
import { assertResourceAccess } from './resources.access';

export const projectNotFound = (projectId: string) =>
  new AppError({ status: 404, code: 'project_not_found', detail: `No project '${projectId}'.` });

/**
 * A project the actor can see (another workspace's, or a missing one, is not found); with `roles`, a
 * participant must also hold one of them in the project's workspace.
 */
export async function findProjectFor(
  deps: HubDeps,
  actor: Actor | undefined,
  projectId: string,
  roles?: readonly ParticipantRole[],
): Promise<Project> {
  const project = await deps.db.project.findUnique({ where: { id: projectId } });
  if (!project) throw projectNotFound(projectId);
  await assertResourceAccess(deps.db, actor, project.workspaceId, {
    notFound: () => projectNotFound(projectId),
    roles,
  });
  return project;
}

/**
 * A project with its workspace, for another service of the platform (service actor: it sees every
 * workspace, so there is no membership check here).
 */
export async function findInternalProject(db: Db, projectId: string) {
  const project = await db.project.findUnique({
    where: { id: projectId },
    include: { workspace: { select: { id: true, slug: true } } },
  });
  if (!project) throw projectNotFound(projectId);
  return project;
}

export type InternalProject = Awaited<ReturnType<typeof findInternalProject>>;
