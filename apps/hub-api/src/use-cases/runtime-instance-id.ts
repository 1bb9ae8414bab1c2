import { AppError } from '@svc/service-kit';
import type { Db } from '../db';
import type { RuntimeHost } from '../generated/prisma/client';

const INVENTORY_ID = /^rti_[0-9a-z]{26}$/;

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
  if (value.startsWith('wrt_')) {
    throw new AppError({
      status: 400,
      code: 'runtime_bundle_id_not_allowed',
      detail: `${field} '${value}' is a runtime bundle id (from runtime.env). Use the host inventory id (rti_…) shown for this host in the Networks view.`,
      extra: { field },
    });
  }
  if (!INVENTORY_ID.test(value)) {
    throw new AppError({
      status: 400,
      code: 'runtime_instance_id_invalid',
      detail: `${field} must be a host inventory id (rti_ followed by 26 characters), as shown in the Networks view.`,
      extra: { field },
    });
  }
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
