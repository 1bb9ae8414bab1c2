import type { HubDeps } from '../../deps';
import type { Project } from '../../generated/prisma/client';

/** The projects of a workspace, oldest first (ids sort by creation time). */
export function listProjects(deps: HubDeps, workspaceId: string): Promise<Project[]> {
  return deps.db.project.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } });
}
