import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import type { RuntimeHost } from '../generated/prisma/client';
import { resolveRuntimeInstanceId } from './runtime-instance-id';
import { canSeeWorkspace } from './workspace-access';

export const runtimeHostNotFound = (hostId: string) =>
  new AppError({ status: 404, code: 'runtime_host_not_found', detail: `No runtime host '${hostId}'.` });

/**
 * A runtime host addressed by its inventory id that the actor can see; a host of another workspace (or a
 * missing one) is reported as not found. A runtime bundle id (`wrt_…`) is never a host id and is refused
 * with `runtime_bundle_id_not_allowed`, which says which id to use (and reveals nothing about any host).
 */
export async function getRuntimeHost(
  deps: Pick<HubDeps, 'db'>,
  actor: Actor | undefined,
  hostId: string,
): Promise<RuntimeHost> {
  if (hostId.startsWith('wrt_')) {
    const workspaceId = actor?.kind === 'api_key' || actor?.kind === 'agent' ? actor.workspaceId : '';
    // Refuses every bundle id before looking anything up.
    await resolveRuntimeInstanceId(deps.db, workspaceId, hostId, 'hostId');
  }
  const host = await deps.db.runtimeHost.findUnique({ where: { id: hostId } });
  if (!host || !(await canSeeWorkspace(deps.db, actor, host.workspaceId))) throw runtimeHostNotFound(hostId);
  return host;
}

/** Bundle ids (`wrt_…`) each host has reported, most recently seen first. */
export async function bundlesByHost(
  deps: Pick<HubDeps, 'db'>,
  hostIds: readonly string[],
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>(hostIds.map((id) => [id, []]));
  if (hostIds.length === 0) return result;
  const bundles = await deps.db.runtimeBundle.findMany({
    where: { runtimeInstanceId: { in: [...hostIds] } },
    orderBy: [{ lastSeenAt: 'desc' }, { id: 'asc' }],
    select: { id: true, runtimeInstanceId: true },
  });
  for (const bundle of bundles) {
    if (bundle.runtimeInstanceId) result.get(bundle.runtimeInstanceId)?.push(bundle.id);
  }
  return result;
}
