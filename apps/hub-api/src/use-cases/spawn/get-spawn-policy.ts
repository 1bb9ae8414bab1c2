import type { HubDeps } from '../../deps';
import { findWorkspaceProject, readSpawnPolicies } from '../../data/spawn.lookups';
import type { SpawnPolicies } from '../../data/spawn.lookups';
import type { Project } from '../../generated/prisma/client';

export interface SpawnPolicyView extends SpawnPolicies {
  workspaceId: string;
  /** Set when the policies were read for a project. */
  project: Project | null;
}

/**
 * The spawn policy of a workspace, or of one of its projects (by id or code): the stored rows and the
 * effective rules (the project's override, else the workspace's, else the default, which is off).
 */
export async function getSpawnPolicy(
  deps: HubDeps,
  workspaceId: string,
  projectRef?: string,
): Promise<SpawnPolicyView> {
  const project =
    projectRef === undefined ? null : await findWorkspaceProject(deps.db, workspaceId, projectRef);
  const policies = await readSpawnPolicies(deps.db, workspaceId, project?.id ?? null);
  return { ...policies, workspaceId, project };
}
