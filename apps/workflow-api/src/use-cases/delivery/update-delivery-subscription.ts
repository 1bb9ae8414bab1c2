import type { Actor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import type { ProjectRef } from '../../auth/project-directory';
import { lockSubscription, skipPending } from '../../data/delivery-subscriptions.locks';
import type { WorkflowDeps } from '../../deps';
import { checkedSubscriptionUrl, descriptionOf, uniqueEvents } from '../../domain/delivery-subscription';
import type { DeliverySubscription, Prisma } from '../../generated/prisma/client';

/**
 * Changes the URL (checked again), events, description, rate limit or order, or disables (`manual`; pending deliveries are
 * skipped) or enables (reason and exhaustion count cleared) the subscription. A patch that changes nothing
 * writes nothing.
 */
export async function updateDeliverySubscription(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  input: WorkflowApi.components['schemas']['DeliverySubscriptionPatchRequest'],
  requestId?: string,
): Promise<DeliverySubscription> {
  // Outside the transaction: the check may resolve a host name, which must not hold a row lock.
  const url =
    input.url !== undefined
      ? await checkedSubscriptionUrl(input.url, deps.delivery.allowLoopbackHttp)
      : undefined;
  const now = deps.now();
  const row = await deps.db.$transaction(async (tx) => {
    const current = await lockSubscription(tx, project.id, id);
    const data: Prisma.DeliverySubscriptionUpdateInput = {};
    const fields: string[] = [];
    if (url && url.href !== current.url) {
      data.url = url.href;
      fields.push('url');
    }
    if (input.events !== undefined) {
      const events = uniqueEvents(input.events);
      const before = Array.isArray(current.events) ? (current.events as string[]) : [];
      if (events.length !== before.length || events.some((event, i) => event !== before[i])) {
        data.events = events;
        fields.push('events');
      }
    }
    if (input.description !== undefined) {
      const description = descriptionOf(input.description);
      if (description !== current.description) {
        data.description = description;
        fields.push('description');
      }
    }
    if (
      input.rate_limit_per_second !== undefined &&
      input.rate_limit_per_second !== current.rateLimitPerSecond
    ) {
      data.rateLimitPerSecond = input.rate_limit_per_second;
      fields.push('rate_limit_per_second');
    }
    if (input.ordered !== undefined && input.ordered !== current.ordered) {
      data.ordered = input.ordered;
      fields.push('ordered');
    }
    let skipped = 0;
    if (input.is_active === false && current.isActive) {
      data.isActive = false;
      data.disabledReason = 'manual';
      fields.push('is_active');
      skipped = await skipPending(tx, id, now);
    } else if (input.is_active === true) {
      if (!current.isActive) fields.push('is_active');
      if (!current.isActive || current.disabledReason !== null || current.consecutiveExhaustions !== 0) {
        data.isActive = true;
        data.disabledReason = null;
        data.consecutiveExhaustions = 0;
      }
    }
    if (Object.keys(data).length === 0) return current;
    const updated = await tx.deliverySubscription.update({
      where: { id },
      data: { ...data, updatedAt: now },
    });
    if (fields.length > 0) {
      await deps.audit.record(
        {
          workspaceId: project.workspace.id,
          projectId: project.id,
          actor,
          action: 'delivery_subscription.updated',
          targetType: 'delivery_subscription',
          targetId: id,
          data: {
            fields,
            is_active: updated.isActive,
            ...(fields.includes('url') ? { url_origin: new URL(updated.url).origin } : {}),
            ...(fields.includes('events') ? { events: updated.events } : {}),
            ...(fields.includes('rate_limit_per_second')
              ? { rate_limit_per_second: updated.rateLimitPerSecond }
              : {}),
            ...(fields.includes('ordered') ? { ordered: updated.ordered } : {}),
            ...(skipped > 0 ? { skipped_deliveries: skipped } : {}),
          },
          requestId,
        },
        tx,
      );
    }
    return updated;
  });
  return row;
}
