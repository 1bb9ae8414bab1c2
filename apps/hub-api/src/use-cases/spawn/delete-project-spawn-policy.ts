import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { findWorkspaceProject, lockWorkspaceSpawns, readSpawnPolicies } from '../../data/spawn.lookups';
import { rulesOf } from '../../domain/spawn-policy';
import type { SpawnPolicyView } from './get-spawn-policy';

/**
 * Removes a project's override of the spawn policy, so the workspace's applies again. Removing a missing
 * override changes nothing and is not audited; a removal is audited as `spawn_policy.deleted`.
 */
export async function deleteProjectSpawnPolicy(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  projectRef: string,
  requestId?: string,
): Promise<SpawnPolicyView> {
  const project = await findWorkspaceProject(deps.db, workspaceId, projectRef);
  await deps.db.$transaction(async (tx) => {
    await lockWorkspaceSpawns(tx, workspaceId);
    const { projectPolicy } = await readSpawnPolicies(tx, workspaceId, project.id);
    if (!projectPolicy) return;
    await tx.spawnPolicy.delete({ where: { id: projectPolicy.id } });
    const rules = rulesOf(projectPolicy);
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'spawn_policy.deleted',
        targetType: 'project',
        targetId: project.id,
        data: {
          scope: 'project',
          project_id: project.id,
          before: {
            enabled: rules.enabled,
            allowed_models: rules.allowedModels,
            allowed_capabilities: rules.allowedCapabilities,
            allowed_command_keys: rules.allowedCommandKeys,
            max_running_agents_per_host: rules.maxRunningAgentsPerHost,
          },
        },
        requestId,
      },
      tx,
    );
  });
  const policies = await readSpawnPolicies(deps.db, workspaceId, project.id);
  return { ...policies, workspaceId, project };
}
