import type { HubDeps } from '../../deps';
import type { Project } from '../../generated/prisma/client';

/** The projects of a workspace, oldest first (ids sort by creation time); archived ones only when asked. */
export function listProjects(
  deps: HubDeps,
  workspaceId: string,
  options: { includeArchived?: boolean } = {},
): Promise<Project[]> {
  return deps.db.project.findMany({
    where: { workspaceId, ...(options.includeArchived ? {} : { archivedAt: null }) },
    orderBy: { id: 'asc' },
  });
}
