import { findInternalProject } from '../../data/projects.lookups';
import { readProjectRoster } from '../../data/roster.lookups';
import type { RosterFilters } from '../../data/roster.lookups';
import type { HubDeps } from '../../deps';
import type { RosterEntry } from '../../domain/roster';

/**
 * The roster of a project for another service of the platform: the agents that can work on it (members of
 * its active teams and agents whose own project it is, never evicted ones), best choice first.
 */
export async function getProjectRoster(
  deps: HubDeps,
  projectId: string,
  filters: RosterFilters = {},
): Promise<RosterEntry[]> {
  const project = await findInternalProject(deps.db, projectId);
  return readProjectRoster(deps.db, deps.now(), project, filters);
}
