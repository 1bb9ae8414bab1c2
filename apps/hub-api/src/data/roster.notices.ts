import type { HubDeps } from '../deps';

/**
 * Announces, after the commit, that a roster of some project of the workspace may answer differently now (an
 * agent registered, started, stopped, evicted, running again or marked lost; a team's agents or projects
 * changed): the Workflow API's worker drops the rosters it keeps for the workspace's projects at once instead
 * of at the end of their time limit (decision 105). Never throws; a lost notice costs at most that limit.
 */
export function announceRosterChanged(deps: Pick<HubDeps, 'notices'>, workspaceId: string): Promise<void> {
  return deps.notices.publish({ kind: 'roster_changed', workspace_id: workspaceId });
}
