import type { HubDeps } from '../../deps';
import { agentSpawnNotFound, withProjectCode } from '../../data/spawn.lookups';
import type { AgentSpawnView } from '../../data/spawn.lookups';

/**
 * One spawn: of the given workspace (another workspace's is not found), or of any workspace for the
 * platform's own services (`workspaceId` undefined).
 */
export async function getAgentSpawn(
  deps: HubDeps,
  spawnId: string,
  workspaceId?: string,
): Promise<AgentSpawnView> {
  const spawn = await deps.db.agentSpawn.findUnique({ where: { id: spawnId }, include: withProjectCode });
  if (!spawn || (workspaceId !== undefined && spawn.workspaceId !== workspaceId)) {
    throw agentSpawnNotFound(spawnId);
  }
  return spawn;
}
