import { deliveryHeaders } from '@svc/contracts';
import { SpanKind, SpanStatusCode, inSpan, newId, traceHeaders } from '@svc/service-kit';
import type { DeliveryTrigger } from '../../data/delivery.queue';
import type { WorkflowDeps } from '../../deps';
import { EXHAUSTIONS_BEFORE_DISABLE } from '../../domain/delivery-settings';
import type { DeliverySubscription } from '../../generated/prisma/client';
import { sendDelivery } from '../../transport/http-sender';

export type AttemptOutcome =
  | { kind: 'done' }
  /** Try again at `at` (the caller reschedules the job). */
  | { kind: 'retry'; at: Date };

/** Up to ±10 % of the delay, so retries of many deliveries do not arrive in one burst. */
function jittered(ms: number): number {
  return Math.max(0, Math.round(ms * (0.9 + Math.random() * 0.2)));
}

/**
 * One attempt of one delivery: sign with a fresh timestamp (same delivery id), send to the pinned, re-checked
 * address, record the attempt, then settle: 2xx succeeded; 410 disables the subscription; otherwise a retry per the
 * schedule (never sooner than `Retry-After`) until the schedule is used up, then failed — and a subscription whose
 * deliveries fail that way several times in a row is disabled (audited). A manual or replay attempt is one attempt.
 * The hot path is two plain SQL statements (read, then attempt + delivery update in one statement), each shared
 * with the other attempts the worker runs at the same time (`deps.deliveryAttempts`).
 */
export async function attemptDelivery(
  deps: WorkflowDeps,
  deliveryId: string,
  trigger: DeliveryTrigger,
): Promise<AttemptOutcome> {
  const row = await deps.deliveryAttempts.read(deliveryId);
  if (!row) return { kind: 'done' };
  if (trigger === 'scheduled' && row.status !== 'pending') return { kind: 'done' };
  if (!row.is_active || row.deleted_at) {
    await deps.pool.query(
      `UPDATE deliveries SET status = 'skipped', completed_at = $2, next_attempt_at = NULL
        WHERE id = $1 AND status = 'pending'`,
      [deliveryId, deps.now()],
    );
    return { kind: 'done' };
  }
  const started = deps.now();
  const timestamp = Math.floor(started.getTime() / 1000);
  const headers = deliveryHeaders({
    secret: deps.signingSecrets.secretsOf(
      {
        id: row.subscription_id,
        secretSealed: row.secret_sealed,
        previousSecretSealed: row.previous_secret_sealed,
        previousSecretExpiresAt: row.previous_secret_expires_at,
      },
      started,
    ),
    deliveryId,
    timestamp,
    body: row.body,
  });
  // A client span while tracing is on; the POST carries its traceparent (not part of what is signed).
  const result = await inSpan(
    'POST delivery',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'svc.delivery.id': deliveryId,
        'svc.delivery.attempt': row.attempts + 1,
      },
    },
    async (span) => {
      const sent = await sendDelivery({
        url: row.url,
        headers: { ...(headers as unknown as Record<string, string>), ...traceHeaders() },
        body: row.body,
        timeoutMs: deps.delivery.timeoutMs,
        allowLoopbackHttp: deps.delivery.allowLoopbackHttp,
        ...(deps.delivery.ca ? { ca: deps.delivery.ca } : {}),
        agents: deps.deliveryAgents,
      });
      if (sent.status !== null) span?.setAttribute('http.response.status_code', sent.status);
      if (sent.error !== null) span?.setAttribute('error.type', sent.error);
      if (sent.error !== null || sent.status === null || sent.status >= 400) {
        span?.setStatus({ code: SpanStatusCode.ERROR });
      }
      return sent;
    },
  );
  deps.deliveryMetrics?.attempted(result);
  const attempt = row.attempts + 1;
  const ok = result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
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
  await deps.deliveryAttempts.record({
    attemptId: newId('dat'),
    deliveryId,
    attempt,
    trigger,
    startedAt: started,
    statusCode: result.status,
    latencyMs: Math.round(result.latencyMs),
    error: result.error,
    responseSnippet: result.responseSnippet,
    status,
    nextAttemptAt,
    completedAt: status === 'pending' ? null : now,
  });
  const subscription = { id: row.subscription_id, workspaceId: row.workspace_id, projectId: row.project_id };
  if (ok) {
    if (row.consecutive_exhaustions > 0) {
      await deps.db.deliverySubscription.update({
        where: { id: row.subscription_id },
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
      where: { id: row.subscription_id },
      data: { consecutiveExhaustions: { increment: 1 } },
    });
    if (updated.consecutiveExhaustions >= EXHAUSTIONS_BEFORE_DISABLE && updated.isActive) {
      await disableSubscription(deps, subscription, 'retries_exhausted', {
        delivery_id: deliveryId,
        consecutive_exhaustions: updated.consecutiveExhaustions,
      });
    }
  }
  return { kind: 'done' };
}

async function disableSubscription(
  deps: WorkflowDeps,
  subscription: Pick<DeliverySubscription, 'id' | 'workspaceId' | 'projectId'>,
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
