import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Actor } from '@svc/auth';
import type { Prisma, TunnelProvider, TunnelState } from '../../generated/prisma/client';

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
function storedError(error: unknown): Record<string, unknown> {
  if (error instanceof AppError) {
    return { code: error.code, status: error.status, detail: error.detail ?? null, ...error.extra };
  }
  return { code: 'internal_error', status: 500, detail: null };
}

/**
 * A provisioning or deletion failed at the provider: the environment becomes `failed` with the problem's
 * public parts, and the failure is audited (`tunnel.provision_failed` / `tunnel.delete_failed`), in one
 * transaction. Returns what was stored.
 */
export async function recordTunnelFailure(
  deps: Pick<HubDeps, 'db' | 'audit'>,
  input: {
    operation: 'provision' | 'delete';
    environment: { id: string; name: string };
    workspaceId: string;
    actor: Actor;
    requestId: string | undefined;
    /** The provider the operation ran against (a provisioning records it on the environment). */
    providerName: TunnelProvider | null;
    error: unknown;
  },
): Promise<Record<string, unknown>> {
  const lastError = storedError(input.error);
  await deps.db.$transaction(async (tx) => {
    await tx.runtimeEnvironment.update({
      where: { id: input.environment.id },
      data: {
        tunnelState: 'failed',
        ...(input.operation === 'provision' ? { tunnelProvider: input.providerName } : {}),
        lastError: lastError as Prisma.InputJsonValue,
        operationStartedAt: null,
      },
    });
    await deps.audit.record(
      {
        workspaceId: input.workspaceId,
        actor: input.actor,
        action: `tunnel.${input.operation}_failed`,
        targetType: 'runtime_environment',
        targetId: input.environment.id,
        data: { name: input.environment.name, provider: input.providerName, error: lastError },
        requestId: input.requestId,
      },
      tx,
    );
  });
  return lastError;
}
