import type { WorkflowDeps } from '../../deps';
import { subscriptionNotFound } from '../../domain/errors';
import type { DeliverySubscription } from '../../generated/prisma/client';

/** A subscription of the project that is not deleted (404 otherwise). */
export async function getDeliverySubscription(
  deps: WorkflowDeps,
  projectId: string,
  id: string,
): Promise<DeliverySubscription> {
  const row = await deps.db.deliverySubscription.findFirst({ where: { id, projectId, deletedAt: null } });
  if (!row) throw subscriptionNotFound(id);
  return row;
}
