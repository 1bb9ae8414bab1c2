import type { Actor } from '@svc/auth';
import { actorIdentity } from '@svc/auth';
import { newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { requireProviderModel } from '../../data/provider-models.lookups';
import { findWorkspaceProject, lockWorkspaceSpawns, readSpawnPolicies } from '../../data/spawn.lookups';
import { rulesOf } from '../../domain/spawn-policy';
import { DEFAULT_SPAWN_POLICY, uniqueInOrder } from '../../domain/spawn-policy';
import type { SpawnPolicyRules } from '../../domain/spawn-policy';
import type { SpawnPolicyView } from './get-spawn-policy';

export interface SpawnPolicyInput {
  enabled: boolean;
  allowedModels?: string[];
  allowedCapabilities?: string[];
  allowedCommandKeys?: string[];
  maxRunningAgentsPerHost?: number;
}

const snake = (rules: SpawnPolicyRules) => ({
  enabled: rules.enabled,
  allowed_models: rules.allowedModels,
  allowed_capabilities: rules.allowedCapabilities,
  allowed_command_keys: rules.allowedCommandKeys,
  max_running_agents_per_host: rules.maxRunningAgentsPerHost,
});

/**
 * Replaces the spawn policy of a workspace (no project) or a project's override of it. Every allowed model
 * must be an exact identifier of the current catalog; lists are de-duplicated keeping their order. The change
 * is audited as `spawn_policy.updated` with the rules before and after.
 */
export async function setSpawnPolicy(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  projectRef: string | undefined,
  input: SpawnPolicyInput,
  requestId?: string,
): Promise<SpawnPolicyView> {
  const project =
    projectRef === undefined ? null : await findWorkspaceProject(deps.db, workspaceId, projectRef);
  const allowedModels = uniqueInOrder(input.allowedModels ?? []);
  for (const [index, model] of allowedModels.entries()) {
    await requireProviderModel(deps.db, model, { field: `allowed_models[${index}]` });
  }
  const rules: SpawnPolicyRules = {
    enabled: input.enabled,
    allowedModels,
    allowedCapabilities: uniqueInOrder(input.allowedCapabilities ?? []),
    allowedCommandKeys: uniqueInOrder(input.allowedCommandKeys ?? DEFAULT_SPAWN_POLICY.allowedCommandKeys),
    maxRunningAgentsPerHost: input.maxRunningAgentsPerHost ?? DEFAULT_SPAWN_POLICY.maxRunningAgentsPerHost,
  };
  const projectId = project?.id ?? null;
  const updatedById = actorIdentity(actor).id;
  await deps.db.$transaction(async (tx) => {
    await lockWorkspaceSpawns(tx, workspaceId);
    const before = (await readSpawnPolicies(tx, workspaceId, projectId))[
      projectId ? 'projectPolicy' : 'workspacePolicy'
    ];
    if (before) {
      await tx.spawnPolicy.update({ where: { id: before.id }, data: { ...rules, updatedById } });
    } else {
      await tx.spawnPolicy.create({
        data: { id: newId('spp'), workspaceId, projectId, ...rules, updatedById },
      });
    }
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'spawn_policy.updated',
        targetType: projectId ? 'project' : 'workspace',
        targetId: projectId ?? workspaceId,
        data: {
          scope: projectId ? 'project' : 'workspace',
          project_id: projectId,
          before: before ? snake(rulesOf(before)) : null,
          after: snake(rules),
        },
        requestId,
      },
      tx,
    );
  });
  const policies = await readSpawnPolicies(deps.db, workspaceId, projectId);
  return { ...policies, workspaceId, project };
}
