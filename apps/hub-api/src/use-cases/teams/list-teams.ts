import type { HubDeps } from '../../deps';
import type { Team } from '../../generated/prisma/client';

/** The teams of a workspace, oldest first (ids sort by creation time). */
export function listTeams(deps: HubDeps, workspaceId: string): Promise<Team[]> {
  return deps.db.team.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } });
}
