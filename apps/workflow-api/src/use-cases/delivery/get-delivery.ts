import type { WorkflowDeps } from '../../deps';
import { deliveryNotFound } from '../../domain/errors';
import type { Delivery, DeliveryAttempt } from '../../generated/prisma/client';

/** One delivery with its body (as sent) and every attempt, in order. */
export async function getDelivery(
  deps: WorkflowDeps,
  projectId: string,
  id: string,
): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] }> {
  const row = await deps.db.delivery.findFirst({ where: { id, projectId } });
  if (!row) throw deliveryNotFound(id);
  const attempts = await deps.db.deliveryAttempt.findMany({
    where: { deliveryId: id },
    orderBy: [{ attempt: 'asc' }, { startedAt: 'asc' }],
  });
  return { delivery: row, attempts };
}
