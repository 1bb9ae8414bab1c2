import type { HubDeps } from '../../deps';
import { findWorkspaceProject, withProjectCode } from '../../data/spawn.lookups';
import type { AgentSpawnView } from '../../data/spawn.lookups';
import type { AgentSpawnState } from '../../generated/prisma/client';

export interface AgentSpawnFilters {
  state?: AgentSpawnState;
  /** Project id or code. */
  project?: string;
  limit?: number;
}

/** Spawns of a workspace, newest first, optionally of one state or project. */
export async function listAgentSpawns(
  deps: HubDeps,
  workspaceId: string,
  filters: AgentSpawnFilters = {},
): Promise<AgentSpawnView[]> {
  const project =
    filters.project === undefined
      ? undefined
      : await findWorkspaceProject(deps.db, workspaceId, filters.project);
  return deps.db.agentSpawn.findMany({
    where: {
      workspaceId,
      ...(filters.state ? { state: filters.state } : {}),
      ...(project ? { projectId: project.id } : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: filters.limit ?? 50,
    include: withProjectCode,
  });
}
