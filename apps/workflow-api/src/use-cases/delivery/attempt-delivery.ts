import { deliveryHeaders } from '@svc/contracts';
import { SpanKind, SpanStatusCode, inSpan, newId, traceHeaders } from '@svc/service-kit';
import type { WorkflowDeps } from '../../deps';
import type { DeliveryTrigger } from '../../domain/delivery-queue';
import { EXHAUSTIONS_BEFORE_DISABLE } from '../../domain/delivery-settings';
import { sendDelivery } from '../../domain/http-sender';
import type { DeliverySubscription } from '../../generated/prisma/client';

export type AttemptOutcome =
  | { kind: 'done' }
  /** Try again at `at` (the caller reschedules the job). */
  | { kind: 'retry'; at: Date };

/** The delivery and its subscription, as one attempt needs them. */
interface AttemptRow {
  id: string;
  status: string;
  attempts: number;
  body: string;
  subscription_id: string;
  url: string;
  is_active: boolean;
  deleted_at: Date | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  consecutive_exhaustions: number;
  workspace_id: string;
  project_id: string;
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
 * The hot path is two plain SQL statements (read, then attempt + delivery update in one statement).
 */
export async function attemptDelivery(
  deps: WorkflowDeps,
  deliveryId: string,
  trigger: DeliveryTrigger,
): Promise<AttemptOutcome> {
  const read = await deps.pool.query<AttemptRow>(
    `SELECT d.id, d.status, d.attempts, d.body, d.subscription_id, s.url, s.is_active, s.deleted_at,
            s.secret_sealed, s.previous_secret_sealed, s.previous_secret_expires_at, s.consecutive_exhaustions,
            s.workspace_id, s.project_id
       FROM deliveries d JOIN delivery_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1`,
    [deliveryId],
  );
  const row = read.rows[0];
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
  await deps.pool.query(
    `WITH recorded AS (
       INSERT INTO delivery_attempts (id, delivery_id, attempt, trigger, started_at, status_code, latency_ms, error,
                                      response_snippet)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9))
     UPDATE deliveries SET attempts = $3, status = $10, last_status_code = $6, next_attempt_at = $11,
                           completed_at = $12
      WHERE id = $2`,
    [
      newId('dat'),
      deliveryId,
      attempt,
      trigger,
      started,
      result.status,
      Math.round(result.latencyMs),
      result.error,
      result.responseSnippet,
      status,
      nextAttemptAt,
      status === 'pending' ? null : now,
    ],
  );
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
