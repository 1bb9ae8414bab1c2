import type { Actor } from '@svc/auth';
import type { ProjectRef } from '../../auth/project-directory';
import { dispatchDeliveries } from '../../data/delivery.events';
import type { WorkflowDeps } from '../../deps';
import { subscriptionDisabled } from '../../domain/delivery-subscription';
import { deliveryNotFound } from '../../domain/errors';
import type { Delivery } from '../../generated/prisma/client';

/** A new attempt now, whatever the delivery's status (same delivery id; the sender signs afresh). */
export async function redeliverDelivery(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  requestId?: string,
): Promise<Delivery> {
  const delivery = await deps.db.delivery.findFirst({ where: { id, projectId: project.id } });
  if (!delivery) throw deliveryNotFound(id);
  const now = deps.now();
  const updated = await deps.db.$transaction(async (tx) => {
    const subscription = await tx.deliverySubscription.findUnique({ where: { id: delivery.subscriptionId } });
    if (!subscription || !subscription.isActive || subscription.deletedAt) throw subscriptionDisabled();
    const row = await tx.delivery.update({
      where: { id },
      data: { status: 'pending', completedAt: null, nextAttemptAt: now, failureReason: null },
    });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery.redelivered',
        targetType: 'delivery',
        targetId: id,
        data: { subscription_id: delivery.subscriptionId, previous_status: delivery.status },
        requestId,
      },
      tx,
    );
    return row;
  });
  await dispatchDeliveries(deps.db, deps.deliveries, [{ deliveryId: id, trigger: 'manual' }]);
  return updated;
}
