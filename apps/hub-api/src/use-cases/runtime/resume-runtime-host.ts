import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { bundlesByHost, findRuntimeHostFor } from '../../data/runtime-hosts.lookups';
import { assertWorkspaceAccess } from '../../data/workspaces.access';
import { RELAY_TOKEN_ROTATOR_ROLES } from '../../domain/roles';
import type { RuntimeHostWithBundles } from './get-runtime-host';

/**
 * Ends a host's drain: it takes spawns and stages again (agents the drain stopped stay stopped). A host that
 * is not draining is answered as it is, without an audit event; an ended drain is audited as
 * `runtime_host.resumed`.
 */
export async function resumeRuntimeHost(
  deps: HubDeps,
  actor: Actor,
  hostId: string,
  requestId?: string,
): Promise<RuntimeHostWithBundles> {
  const found = await findRuntimeHostFor(deps.db, actor, hostId);
  const workspace = await deps.db.workspace.findUnique({ where: { id: found.workspaceId } });
  await assertWorkspaceAccess(deps.db, actor, workspace, found.workspaceId, RELAY_TOKEN_ROTATOR_ROLES);
  const host = await deps.db.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<Array<{ drain_requested_at: Date | null; drained_at: Date | null }>>`
      SELECT drain_requested_at, drained_at FROM runtime_hosts WHERE id = ${found.id} FOR UPDATE`;
    const drain = locked[0];
    if (!drain?.drain_requested_at) return tx.runtimeHost.findUniqueOrThrow({ where: { id: found.id } });
    const updated = await tx.runtimeHost.update({
      where: { id: found.id },
      data: { drainRequestedAt: null, drainRequestedBy: null, drainedAt: null },
    });
    await deps.audit.record(
      {
        workspaceId: found.workspaceId,
        actor,
        action: 'runtime_host.resumed',
        targetType: 'runtime_host',
        targetId: found.id,
        data: {
          runtime_instance_id: found.id,
          drain_requested_at: drain.drain_requested_at.toISOString(),
          drained_at: drain.drained_at ? drain.drained_at.toISOString() : null,
        },
        requestId,
      },
      tx,
    );
    return updated;
  });
  const bundles = await bundlesByHost(deps.db, [host.id]);
  return { host, bundles: bundles.get(host.id) ?? [] };
}
