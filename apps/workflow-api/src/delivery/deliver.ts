import { deliveryHeaders } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import type { WorkflowDeps } from '../deps';
import type { DeliverySubscription } from '../generated/prisma/client';
import { sendDelivery } from './http-sender';
import type { DeliveryTrigger } from './queue';
import { EXHAUSTIONS_BEFORE_DISABLE } from './settings';

export type AttemptOutcome =
  | { kind: 'done' }
  /** Try again at `at` (the caller reschedules the job). */
  | { kind: 'retry'; at: Date };

/** The subscription's signing secrets: the current one, plus the previous one during a rotation's grace. */
export function signingSecretsOf(
  deps: WorkflowDeps,
  subscription: DeliverySubscription,
  now: Date,
): string[] {
  const box = deps.delivery.secrets;
  if (!box) throw new Error('WORKFLOW_ENCRYPTION_KEYS is not configured; deliveries cannot be signed');
  const secrets = [box.open(subscription.secretSealed, subscription.id)];
  if (
    subscription.previousSecretSealed &&
    subscription.previousSecretExpiresAt &&
    subscription.previousSecretExpiresAt > now
  ) {
    secrets.push(box.open(subscription.previousSecretSealed, subscription.id));
  }
  return secrets;
}

/** Up to ±10 % of the delay, so retries of many deliveries do not arrive in one burst. */
function jittered(ms: number): number {
  return Math.max(0, Math.round(ms * (0.9 + Math.random() * 0.2)));
}

/**
 * One attempt of one delivery: sign with a fresh timestamp (same delivery id), send to the pinned, re-checked
 * address, record the attempt, then settle: 2xx succeeded; 410 disables the subscription; otherwise a retry per the
 * schedule (never sooner than `Retry-After`) until the schedule is used up, then failed — and a subscription whose
 * deliveries fail that way several times in a row is disabled (audited). A manual or replay attempt is one attempt.
 */
export async function attemptDelivery(
  deps: WorkflowDeps,
  deliveryId: string,
  trigger: DeliveryTrigger,
): Promise<AttemptOutcome> {
  const delivery = await deps.db.delivery.findUnique({ where: { id: deliveryId } });
  if (!delivery) return { kind: 'done' };
  if (trigger === 'scheduled' && delivery.status !== 'pending') return { kind: 'done' };
  const subscription = await deps.db.deliverySubscription.findUnique({
    where: { id: delivery.subscriptionId },
  });
  if (!subscription || !subscription.isActive || subscription.deletedAt) {
    await deps.db.delivery.updateMany({
      where: { id: deliveryId, status: 'pending' },
      data: { status: 'skipped', completedAt: deps.now(), nextAttemptAt: null },
    });
    return { kind: 'done' };
  }
  const started = deps.now();
  const timestamp = Math.floor(started.getTime() / 1000);
  const headers = deliveryHeaders({
    secret: signingSecretsOf(deps, subscription, started),
    deliveryId,
    timestamp,
    body: delivery.body,
  });
  const result = await sendDelivery({
    url: subscription.url,
    headers: headers as unknown as Record<string, string>,
    body: delivery.body,
    timeoutMs: deps.delivery.timeoutMs,
    allowLoopbackHttp: deps.delivery.allowLoopbackHttp,
    ...(deps.delivery.ca ? { ca: deps.delivery.ca } : {}),
  });
  const attempt = delivery.attempts + 1;
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const schedule = deps.delivery.retryScheduleMs;
  // Scheduled attempts follow the schedule; an extra manual attempt does not reopen it.
  const retryIndex = attempt - 1;
  const canRetry = !ok && !gone && trigger === 'scheduled' && retryIndex < schedule.length;
  const now = deps.now();
  let nextAttemptAt: Date | null = null;
  if (canRetry) {
    const delay = Math.max(jittered(schedule[retryIndex]!), result.retryAfterMs ?? 0);
    nextAttemptAt = new Date(now.getTime() + delay);
  }
  const status = ok ? 'succeeded' : canRetry ? 'pending' : 'failed';
  await deps.db.$transaction([
    deps.db.deliveryAttempt.create({
      data: {
        id: newId('dat'),
        deliveryId,
        attempt,
        trigger,
        startedAt: started,
        statusCode: result.status,
        latencyMs: Math.round(result.latencyMs),
        error: result.error,
        responseSnippet: result.responseSnippet,
      },
    }),
    deps.db.delivery.update({
      where: { id: deliveryId },
      data: {
        attempts: attempt,
        status,
        lastStatusCode: result.status,
        nextAttemptAt,
        completedAt: status === 'pending' ? null : now,
      },
    }),
  ]);
  if (ok) {
    if (subscription.consecutiveExhaustions > 0) {
      await deps.db.deliverySubscription.update({
        where: { id: subscription.id },
        data: { consecutiveExhaustions: 0 },
      });
    }
    return { kind: 'done' };
  }
  if (gone) {
    await disableSubscription(deps, subscription, 'gone', { delivery_id: deliveryId });
    return { kind: 'done' };
  }
  if (nextAttemptAt) return { kind: 'retry', at: nextAttemptAt };
  if (trigger === 'scheduled') {
    const updated = await deps.db.deliverySubscription.update({
      where: { id: subscription.id },
      data: { consecutiveExhaustions: { increment: 1 } },
    });
    if (updated.consecutiveExhaustions >= EXHAUSTIONS_BEFORE_DISABLE && updated.isActive) {
      await disableSubscription(deps, updated, 'retries_exhausted', {
        delivery_id: deliveryId,
        consecutive_exhaustions: updated.consecutiveExhaustions,
      });
    }
  }
  return { kind: 'done' };
}

async function disableSubscription(
  deps: WorkflowDeps,
  subscription: DeliverySubscription,
  reason: 'gone' | 'retries_exhausted',
  data: Record<string, unknown>,
): Promise<void> {
  const changed = await deps.db.deliverySubscription.updateMany({
    where: { id: subscription.id, isActive: true },
    data: { isActive: false, disabledReason: reason },
  });
  if (changed.count === 0) return;
  await deps.audit.record({
    workspaceId: subscription.workspaceId,
    projectId: subscription.projectId,
    actor: { kind: 'service', service: 'workflow-delivery' },
    action: 'delivery_subscription.disabled',
    targetType: 'delivery_subscription',
    targetId: subscription.id,
    data: { reason, ...data },
  });
  deps.logger.warn({ subscription_id: subscription.id, reason }, 'delivery subscription disabled');
}
