import type { HubDeps } from '../deps';

/**
 * Wakes the console router of the agent's host after a change to its route table is committed (an agent
 * registered there with a serve port, started, stopped, evicted or deleted): the router reloads the table at once rather than at
 * its next poll (decision 73). Never throws; a lost notice leaves the router's poll to find the change.
 */
export function announceConsoleRoutes(
  deps: Pick<HubDeps, 'routeNotices'>,
  agent: { id: string; workspaceId: string; runtimeInstanceId: string | null },
): Promise<void> {
  return deps.routeNotices.publish({
    workspace_id: agent.workspaceId,
    host_id: agent.runtimeInstanceId,
    agent_id: agent.id,
  });
}
