import { findInternalProject } from '../../data/projects.lookups';
import type { InternalProject } from '../../data/projects.lookups';
import type { HubDeps } from '../../deps';

/**
 * A project with its workspace, for another service of the platform (service actor: it sees every
 * workspace, so there is no membership check here).
 */
export function getInternalProject(deps: HubDeps, projectId: string): Promise<InternalProject> {
  return findInternalProject(deps.db, projectId);
}
