import type { Tx } from '../db';
import { subscriptionNotFound } from '../domain/errors';
import type { DeliverySubscription } from '../generated/prisma/client';

/** Locks the project's live subscription row for the rest of the transaction (404 when there is none). */
export async function lockSubscription(tx: Tx, projectId: string, id: string): Promise<DeliverySubscription> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM delivery_subscriptions
    WHERE id = ${id} AND project_id = ${projectId} AND deleted_at IS NULL
    FOR UPDATE`;
  if (locked.length === 0) throw subscriptionNotFound(id);
  return tx.deliverySubscription.findUniqueOrThrow({ where: { id } });
}

/** Pending deliveries of a subscription that was disabled or deleted will not be sent: mark them skipped. */
export async function skipPending(tx: Tx, subscriptionId: string, now: Date): Promise<number> {
  const skipped = await tx.delivery.updateMany({
    where: { subscriptionId, status: 'pending' },
    data: { status: 'skipped', completedAt: now, nextAttemptAt: null },
  });
  return skipped.count;
}
