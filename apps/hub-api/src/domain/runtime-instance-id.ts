import { AppError } from '@svc/service-kit';

const INVENTORY_ID = /^rti_[0-9a-z]{26}$/;

/**
 * Checks the shape of a `runtime_instance_id`: it must be a host inventory id (`rti_…`). A runtime bundle id
 * (`wrt_…`, from runtime.env) is refused with a message naming the id to use.
 */
export function assertInventoryId(value: string, field = 'runtime_instance_id'): void {
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
}
