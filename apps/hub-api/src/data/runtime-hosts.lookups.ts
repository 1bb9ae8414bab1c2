import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { Db } from '../db';
import { assertInventoryId } from '../domain/runtime-instance-id';
import type { RuntimeHost } from '../generated/prisma/client';
import { canSeeWorkspace } from './workspaces.access';

export const runtimeHostNotFound = (hostId: string) =>
  new AppError({ status: 404, code: 'runtime_host_not_found', detail: `No runtime host '${hostId}'.` });

/**
 * Checks a `runtime_instance_id`: it must be the inventory id (`rti_…`) of a runtime host of this
 * workspace. A runtime bundle id (`wrt_…`, from runtime.env) is refused with a message naming the id to use.
 */
export async function resolveRuntimeInstanceId(
  db: Db,
  workspaceId: string,
  value: string,
  field = 'runtime_instance_id',
): Promise<RuntimeHost> {
  assertInventoryId(value, field);
  const host = await db.runtimeHost.findFirst({ where: { id: value, workspaceId } });
  if (!host) {
    throw new AppError({
      status: 400,
      code: 'runtime_host_not_found',
      detail: `No runtime host '${value}' in this workspace; register the host first and use its inventory id.`,
      extra: { field },
    });
  }
  return host;
}

/**
 * A runtime host addressed by its inventory id that the actor can see; a host of another workspace (or a
 * missing one) is reported as not found. A runtime bundle id (`wrt_…`) is never a host id and is refused
 * with `runtime_bundle_id_not_allowed`, which says which id to use (and reveals nothing about any host).
 */
export async function findRuntimeHostFor(
  db: Db,
  actor: Actor | undefined,
  hostId: string,
): Promise<RuntimeHost> {
  // Refuses every bundle id before looking anything up.
  if (hostId.startsWith('wrt_')) assertInventoryId(hostId, 'hostId');
  const host = await db.runtimeHost.findUnique({ where: { id: hostId } });
  if (!host || !(await canSeeWorkspace(db, actor, host.workspaceId))) throw runtimeHostNotFound(hostId);
  return host;
}

/** Bundle ids (`wrt_…`) each host has reported, most recently seen first. */
export async function bundlesByHost(db: Db, hostIds: readonly string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>(hostIds.map((id) => [id, []]));
  if (hostIds.length === 0) return result;
  const bundles = await db.runtimeBundle.findMany({
    where: { runtimeInstanceId: { in: [...hostIds] } },
    orderBy: [{ lastSeenAt: 'desc' }, { id: 'asc' }],
    select: { id: true, runtimeInstanceId: true },
  });
  for (const bundle of bundles) {
    if (bundle.runtimeInstanceId) result.get(bundle.runtimeInstanceId)?.push(bundle.id);
  }
  return result;
}
