import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { TunnelState } from '../../generated/prisma/client';

/** A provisioning or deletion that has run this long is taken to have died with its replica. */
export const TUNNEL_OPERATION_STALE_MS = 5 * 60_000;

/**
 * Moves the environment into `provisioning` or `deleting` unless another of these runs (one that started
 * less than five minutes ago), in one conditional update, so two replicas never drive one tunnel at once.
 */
export async function beginTunnelOperation(
  deps: Pick<HubDeps, 'db' | 'now'>,
  environmentId: string,
  state: Extract<TunnelState, 'provisioning' | 'deleting'>,
): Promise<void> {
  const now = deps.now();
  const taken = await deps.db.runtimeEnvironment.updateMany({
    where: {
      id: environmentId,
      OR: [
        { tunnelState: { notIn: ['provisioning', 'deleting'] } },
        { operationStartedAt: null },
        { operationStartedAt: { lt: new Date(now.getTime() - TUNNEL_OPERATION_STALE_MS) } },
      ],
    },
    data: { tunnelState: state, operationStartedAt: now },
  });
  if (taken.count === 0) {
    throw new AppError({
      status: 409,
      code: 'tunnel_operation_in_progress',
      detail: 'Another provisioning or deletion of this environment is running; retry when it has ended.',
    });
  }
}

/** The problem kept on the environment after a failed provisioning or deletion (public parts only). */
export function storedError(error: unknown): Record<string, unknown> {
  if (error instanceof AppError) {
    return { code: error.code, status: error.status, detail: error.detail ?? null, ...error.extra };
  }
  return { code: 'internal_error', status: 500, detail: null };
}
