import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { bundlesByHost, findRuntimeHostFor } from '../../data/runtime-hosts.lookups';
import { assertWorkspaceAccess } from '../../data/workspaces.access';
import { runningAgentFilter } from '../../domain/host-readiness';
import { RELAY_TOKEN_ROTATOR_ROLES } from '../../domain/roles';
import type { RuntimeHostWithBundles } from './get-runtime-host';

/** Who asked, as the host row and the Networks view show it: a participant's email or a key's prefix. */
function requester(actor: Actor): string {
  if (actor.kind === 'participant') return actor.email;
  if (actor.kind === 'api_key') return `key ${actor.prefix}`;
  return actor.kind;
}

/**
 * Asks a host to drain: from the commit on it is not spawn ready, and the hub refuses handoffs to its agents
 * (the row is updated, so a handoff creation holding the row's share lock finishes first or sees the drain).
 * Its runtime stops each agent once it holds no open stage; the host is drained when no agent of it runs any
 * more (at once when none runs now). Repeating it keeps the first request. Audited as
 * `runtime_host.drain_requested` (and `runtime_host.drained` when none runs now).
 */
export async function drainRuntimeHost(
  deps: HubDeps,
  actor: Actor,
  hostId: string,
  requestId?: string,
): Promise<RuntimeHostWithBundles> {
  const found = await findRuntimeHostFor(deps.db, actor, hostId);
  const workspace = await deps.db.workspace.findUnique({ where: { id: found.workspaceId } });
  await assertWorkspaceAccess(deps.db, actor, workspace, found.workspaceId, RELAY_TOKEN_ROTATOR_ROLES);
  const now = deps.now();
  const host = await deps.db.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<Array<{ drain_requested_at: Date | null }>>`
      SELECT drain_requested_at FROM runtime_hosts WHERE id = ${found.id} FOR UPDATE`;
    if (locked[0]?.drain_requested_at) return tx.runtimeHost.findUniqueOrThrow({ where: { id: found.id } });
    const running = await tx.agent.count({
      where: { runtimeInstanceId: found.id, ...runningAgentFilter(now) },
    });
    const updated = await tx.runtimeHost.update({
      where: { id: found.id },
      data: {
        drainRequestedAt: now,
        drainRequestedBy: requester(actor),
        drainedAt: running === 0 ? now : null,
      },
    });
    await deps.audit.record(
      {
        workspaceId: found.workspaceId,
        actor,
        action: 'runtime_host.drain_requested',
        targetType: 'runtime_host',
        targetId: found.id,
        data: { runtime_instance_id: found.id, running_agents: running },
        requestId,
      },
      tx,
    );
    if (running === 0) {
      await deps.audit.record(
        {
          workspaceId: found.workspaceId,
          actor,
          action: 'runtime_host.drained',
          targetType: 'runtime_host',
          targetId: found.id,
          data: { runtime_instance_id: found.id, drain_requested_at: now.toISOString() },
          requestId,
        },
        tx,
      );
    }
    return updated;
  });
  const bundles = await bundlesByHost(deps.db, [host.id]);
  return { host, bundles: bundles.get(host.id) ?? [] };
}
