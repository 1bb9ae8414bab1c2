import type { WorkflowDeps } from '../../deps';
import type { DeliverySubscription } from '../../generated/prisma/client';

/** The project's subscriptions that are not deleted, newest first. */
export async function listDeliverySubscriptions(
  deps: WorkflowDeps,
  projectId: string,
): Promise<DeliverySubscription[]> {
  return deps.db.deliverySubscription.findMany({
    where: { projectId, deletedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}
