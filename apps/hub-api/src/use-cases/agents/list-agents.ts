import type { HubDeps } from '../../deps';
import type { AgentStatus } from '../../generated/prisma/client';
import { resolveRuntimeInstanceId } from '../../data/runtime-hosts.lookups';

/**
 * Agents of a workspace, oldest first, optionally by status, runtime host or team. Filtering by a runtime
 * bundle id (`wrt_…`) is refused with the same guidance as everywhere else: use the inventory id.
 */
export async function listAgents(
  deps: HubDeps,
  workspaceId: string,
  filters: { status?: AgentStatus; runtimeInstanceId?: string; teamId?: string },
) {
  if (filters.runtimeInstanceId?.startsWith('wrt_')) {
    await resolveRuntimeInstanceId(deps.db, workspaceId, filters.runtimeInstanceId);
  }
  return deps.db.agent.findMany({
    where: {
      workspaceId,
      ...(filters.status ? { status: filters.status } : {}),
      ...(filters.runtimeInstanceId ? { runtimeInstanceId: filters.runtimeInstanceId } : {}),
      ...(filters.teamId ? { teams: { some: { teamId: filters.teamId } } } : {}),
    },
    orderBy: { id: 'asc' },
  });
}
