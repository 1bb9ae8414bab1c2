import type { WorkflowApi } from '@svc/contracts';
import type { WorkflowDeps } from '../../deps';
import type { DeliveryEventType } from '../../domain/delivery-event';
import {
  decodeDeliveryCursor,
  DEFAULT_DELIVERY_PAGE,
  encodeDeliveryCursor,
  MAX_DELIVERY_PAGE,
} from '../../domain/delivery-subscription';
import type { Delivery, Prisma } from '../../generated/prisma/client';

type DeliveryStatus = WorkflowApi.components['schemas']['DeliveryStatus'];

export interface ListDeliveriesFilter {
  status?: DeliveryStatus;
  event?: DeliveryEventType;
  subscriptionId?: string;
  invocationId?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

/** A page of the project's deliveries, newest first (created time, then id), with a cursor for the next. */
export async function listDeliveries(
  deps: WorkflowDeps,
  projectId: string,
  filter: ListDeliveriesFilter,
): Promise<{ items: Delivery[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(filter.limit ?? DEFAULT_DELIVERY_PAGE, 1), MAX_DELIVERY_PAGE);
  const and: Prisma.DeliveryWhereInput[] = [{ projectId }];
  if (filter.status) and.push({ status: filter.status });
  if (filter.event) and.push({ event: filter.event });
  if (filter.subscriptionId) and.push({ subscriptionId: filter.subscriptionId });
  if (filter.invocationId) and.push({ invocationId: filter.invocationId });
  if (filter.since) and.push({ createdAt: { gte: new Date(filter.since) } });
  if (filter.until) and.push({ createdAt: { lt: new Date(filter.until) } });
  if (filter.cursor) {
    const after = decodeDeliveryCursor(filter.cursor);
    and.push({
      OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
    });
  }
  const rows = await deps.db.delivery.findMany({
    where: { AND: and },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page,
    nextCursor: rows.length > limit && last ? encodeDeliveryCursor(last) : null,
  };
}
