import { readRosterOfProject } from '../../data/roster.lookups';
import type { RosterFilters } from '../../data/roster.lookups';
import type { HubDeps } from '../../deps';
import type { RosterEntry } from '../../domain/roster';

/**
 * The roster of a project for another service of the platform: the agents that can work on it (members of
 * its active teams and agents whose own project it is, never evicted ones), best choice first. One statement
 * (decision 97); a missing project is 404.
 */
export async function getProjectRoster(
  deps: HubDeps,
  projectId: string,
  filters: RosterFilters = {},
): Promise<RosterEntry[]> {
  const { roster } = await readRosterOfProject(deps.pool, deps.now(), projectId, filters);
  return roster;
}
