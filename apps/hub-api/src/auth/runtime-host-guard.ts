import type { OperationGuard } from '@svc/service-kit';
import type { Db } from '../db';
import { findRuntimeHostFor } from '../data/runtime-hosts.lookups';

/**
 * For the listed operations addressed by `{hostId}`: the host must be one the caller's workspace owns, checked
 * before the body is read (a caller of another workspace learns nothing from validation errors).
 */
export function runtimeHostGuard(db: Db, operationIds: readonly string[]): OperationGuard {
  const guarded = new Set(operationIds);
  return async (ctx) => {
    if (!guarded.has(ctx.operation.operationId)) return;
    await findRuntimeHostFor(db, ctx.actor, String((ctx.params as Record<string, unknown>).hostId));
  };
}
