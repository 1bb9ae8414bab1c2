import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { bundlesByHost, findRuntimeHostFor } from '../../data/runtime-hosts.lookups';
import type { RuntimeHostWithBundles } from './get-runtime-host';
import { assertWorkspaceAccess } from '../../data/workspaces.access';
import { RELAY_TOKEN_ROTATOR_ROLES } from '../../domain/roles';

export interface RuntimeHostLimitsInput {
  /** Undefined keeps the stored value; null removes the limit. */
  maxConcurrentSpawns?: number | null;
  maxAgents?: number | null;
  requestId?: string;
}

/**
 * Sets a host's own spawn limits (spawns in progress at once, agents running plus spawns in progress), which
 * host selection applies beside the spawn policy's per-host limit. Owners and admins (or a key with
 * `runtime-hosts:write`) of the host's workspace; audited as `runtime_host.limits_set`.
 */
export async function setRuntimeHostLimits(
  deps: HubDeps,
  actor: Actor,
  hostId: string,
  input: RuntimeHostLimitsInput,
): Promise<RuntimeHostWithBundles> {
  const host = await findRuntimeHostFor(deps.db, actor, hostId);
  const workspace = await deps.db.workspace.findUnique({ where: { id: host.workspaceId } });
  await assertWorkspaceAccess(deps.db, actor, workspace, host.workspaceId, RELAY_TOKEN_ROTATOR_ROLES);
  const updated = await deps.db.$transaction(async (tx) => {
    const updated = await tx.runtimeHost.update({
      where: { id: host.id },
      data: {
        ...(input.maxConcurrentSpawns !== undefined
          ? { maxConcurrentSpawns: input.maxConcurrentSpawns }
          : {}),
        ...(input.maxAgents !== undefined ? { maxAgents: input.maxAgents } : {}),
      },
    });
    await deps.audit.record(
      {
        workspaceId: host.workspaceId,
        actor,
        action: 'runtime_host.limits_set',
        targetType: 'runtime_host',
        targetId: host.id,
        data: {
          max_concurrent_spawns: updated.maxConcurrentSpawns,
          max_agents: updated.maxAgents,
          previous: { max_concurrent_spawns: host.maxConcurrentSpawns, max_agents: host.maxAgents },
        },
        requestId: input.requestId,
      },
      tx,
    );
    return updated;
  });
  const bundles = await bundlesByHost(deps.db, [host.id]);
  return { host: updated, bundles: bundles.get(host.id) ?? [] };
}
