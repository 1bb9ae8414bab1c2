import type { Actor } from '@svc/auth';
import type { ProjectRef } from '../../auth/project-directory';
import { lockSubscription, skipPending } from '../../data/delivery-subscriptions.locks';
import type { WorkflowDeps } from '../../deps';

/** Soft delete: the row (and its delivery history) stays, inactive; its pending deliveries are skipped. */
export async function deleteDeliverySubscription(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  requestId?: string,
): Promise<void> {
  const now = deps.now();
  await deps.db.$transaction(async (tx) => {
    await lockSubscription(tx, project.id, id);
    await tx.deliverySubscription.update({
      where: { id },
      data: { deletedAt: now, isActive: false, updatedAt: now },
    });
    const skipped = await skipPending(tx, id, now);
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery_subscription.deleted',
        targetType: 'delivery_subscription',
        targetId: id,
        data: { skipped_deliveries: skipped },
        requestId,
      },
      tx,
    );
  });
}
