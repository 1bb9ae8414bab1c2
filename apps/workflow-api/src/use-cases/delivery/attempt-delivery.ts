import { deliveryHeaders } from '@svc/contracts';
import { SpanKind, SpanStatusCode, inSpan, newId, traceHeaders } from '@svc/service-kit';
import type { AttemptRecord, AttemptRow } from '../../data/delivery-attempts.batch';
import { dispatchDeliveries, recordOperationalEvent } from '../../data/delivery.events';
import type { DeliveryJob, DeliveryTrigger } from '../../data/delivery.queue';
import type { Tx } from '../../db';
import type { WorkflowDeps } from '../../deps';
import {
  attemptsExhaustedBody,
  isOperationalEvent,
  subscriptionDisabledBody,
} from '../../domain/delivery-event';
import type { DeliveryResult } from '../../domain/delivery-result';
import {
  EXHAUSTIONS_BEFORE_DISABLE,
  ORDERED_LONG_WAIT_MS,
  ORDERED_SHORT_WAIT_MS,
} from '../../domain/delivery-settings';
import { sendDelivery } from '../../transport/http-sender';

export type AttemptOutcome =
  | { kind: 'done' }
  /** Try again at `at` (the caller reschedules the job). */
  | { kind: 'retry'; at: Date }
  /**
   * Not attempted yet: an earlier delivery of an ordered subscription is pending, or the rate limit's slot is
   * later. The caller delays the job until `at`, keeping `slotAt` (a reserved slot) with it.
   */
  | { kind: 'wait'; at: Date; slotAt?: number };

/** How a `failed` delivery ended. */
type FailureReason = 'retries_exhausted' | 'stopped_by_receiver' | 'gone' | 'attempt_failed';

/** Up to ±10 % of the delay, so retries of many deliveries do not arrive in one burst. */
function jittered(ms: number): number {
  return Math.max(0, Math.round(ms * (0.9 + Math.random() * 0.2)));
}

/**
 * One attempt of one delivery: sign with a fresh timestamp (same delivery id), send to the pinned, re-checked
 * address, record the attempt, then settle: 2xx succeeded; 410 disables the subscription; `X-Svc-Stop-Retries:
 * true` on another answer fails it at once; otherwise a retry per the schedule (never sooner than `Retry-After`)
 * until the schedule is used up, then failed — audited and announced as `delivery.attempts_exhausted`, and a
 * subscription whose deliveries fail that way several times in a row is disabled (audited, announced as
 * `delivery_subscription.disabled`). A manual or replay attempt is one attempt.
 *
 * Before sending, an ordered subscription's delivery waits while an earlier one is pending, and a rate-limited
 * subscription's delivery takes its slot (Redis) and waits for it. The common path is two plain SQL statements
 * (read, then attempt + delivery update in one statement), each shared with the other attempts the worker runs
 * at the same time (`deps.deliveryAttempts`); an ending that raises operational events is one transaction.
 */
export async function attemptDelivery(
  deps: WorkflowDeps,
  deliveryId: string,
  trigger: DeliveryTrigger,
  options: { slotAt?: number } = {},
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
  if (row.ordered) {
    const at = await orderedWait(deps, row);
    if (at) return { kind: 'wait', at };
  }
  if (row.rate_limit_per_second !== null) {
    const wait = await paceDelivery(deps, row, row.rate_limit_per_second, options.slotAt);
    if (wait) return wait;
  }
  const started = deps.now();
  const result = await send(deps, row, started);
  deps.deliveryMetrics?.attempted(result);
  const attempt = row.attempts + 1;
  const ok = result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const stopped = !ok && result.stopRetries;
  const schedule = deps.delivery.retryScheduleMs;
  // Scheduled attempts follow the schedule; an extra manual attempt does not reopen it.
  const retryIndex = attempt - 1;
  const canRetry = !ok && !gone && !stopped && trigger === 'scheduled' && retryIndex < schedule.length;
  const now = deps.now();
  let nextAttemptAt: Date | null = null;
  if (canRetry) {
    const delay = Math.max(jittered(schedule[retryIndex]!), result.retryAfterMs ?? 0);
    nextAttemptAt = new Date(now.getTime() + delay);
  }
  const status = ok ? 'succeeded' : canRetry ? 'pending' : 'failed';
  const failureReason: FailureReason | null =
    status !== 'failed'
      ? null
      : gone
        ? 'gone'
        : stopped
          ? 'stopped_by_receiver'
          : trigger === 'scheduled'
            ? 'retries_exhausted'
            : 'attempt_failed';
  const record: AttemptRecord = {
    attemptId: newId('dat'),
    deliveryId,
    attempt,
    trigger,
    startedAt: started,
    statusCode: result.status,
    latencyMs: Math.round(result.latencyMs),
    error: result.error,
    responseSnippet: result.responseSnippet,
    retriesStopped: stopped,
    status,
    failureReason,
    nextAttemptAt,
    completedAt: status === 'pending' ? null : now,
  };
  if (failureReason === 'retries_exhausted' || failureReason === 'gone') {
    await settleWithEvents(deps, row, record, failureReason);
  } else {
    await deps.deliveryAttempts.record(record);
    if (ok && row.consecutive_exhaustions > 0) {
      await deps.db.deliverySubscription.update({
        where: { id: row.subscription_id },
        data: { consecutiveExhaustions: 0 },
      });
    }
  }
  if (nextAttemptAt) return { kind: 'retry', at: nextAttemptAt };
  if (row.ordered) await wakeNextOrdered(deps, row.subscription_id);
  return { kind: 'done' };
}

/** Signs (fresh timestamp, same id) and sends once, inside a client span while tracing is on. */
async function send(deps: WorkflowDeps, row: AttemptRow, started: Date): Promise<DeliveryResult> {
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
    deliveryId: row.id,
    timestamp: Math.floor(started.getTime() / 1000),
    body: row.body,
  });
  // The POST carries the span's traceparent (not part of what is signed).
  return inSpan(
    'POST delivery',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'svc.delivery.id': row.id,
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
}

/**
 * Ordered subscriptions: null when no earlier delivery of the subscription is pending; otherwise when to look
 * again. The next in line looks again soon (or when its predecessor's retry is due); the rest wait longer, as
 * each delivery that ends wakes the next in line itself.
 */
async function orderedWait(deps: WorkflowDeps, row: AttemptRow): Promise<Date | null> {
  const { rows } = await deps.pool.query<{ id: string; next_attempt_at: Date | null }>(
    `SELECT id, next_attempt_at FROM deliveries
      WHERE subscription_id = $1 AND status = 'pending' AND seq < $2::bigint
      ORDER BY seq LIMIT 2`,
    [row.subscription_id, row.seq],
  );
  if (rows.length === 0) return null;
  const now = Date.now();
  if (rows.length > 1) return new Date(now + ORDERED_LONG_WAIT_MS);
  const due = rows[0]!.next_attempt_at?.getTime() ?? now;
  const wait = Math.min(Math.max(due - now + 100, ORDERED_SHORT_WAIT_MS), ORDERED_LONG_WAIT_MS);
  return new Date(now + wait);
}

/** An ordered subscription's delivery ended: its next pending delivery runs now instead of at its next look. */
async function wakeNextOrdered(deps: WorkflowDeps, subscriptionId: string): Promise<void> {
  const { rows } = await deps.pool.query<{ id: string }>(
    `SELECT id FROM deliveries WHERE subscription_id = $1 AND status = 'pending' ORDER BY seq LIMIT 1`,
    [subscriptionId],
  );
  if (rows.length > 0) {
    await deps.deliveries.promote(rows.map((r) => r.id)).catch((error: unknown) => {
      deps.logger.warn({ err: error }, 'waking the next ordered delivery failed; it looks again later');
    });
  }
}

/**
 * Rate-limited subscriptions: null when this attempt may go now (its slot came); otherwise a wait until the
 * slot reserved for it. A job woken before its slot waits again for the same slot.
 */
async function paceDelivery(
  deps: WorkflowDeps,
  row: AttemptRow,
  perSecond: number,
  slotAt: number | undefined,
): Promise<AttemptOutcome | null> {
  const now = Date.now();
  if (slotAt !== undefined) {
    if (now >= slotAt - 2) return null;
    return { kind: 'wait', at: new Date(slotAt), slotAt };
  }
  if (!deps.deliveryRate) throw new Error('a rate-limited delivery needs the worker’s rate limiter');
  const { waitMs } = await deps.deliveryRate.reserve(row.subscription_id, perSecond);
  if (waitMs <= 2) return null;
  const at = now + Math.ceil(waitMs);
  return { kind: 'wait', at: new Date(at), slotAt: at };
}

/**
 * The endings that raise operational events, in one transaction with the attempt: retries exhausted (audited;
 * the subscription's count goes up and may disable it) and 410 Gone (disables it). The events' deliveries are
 * enqueued after the commit.
 */
async function settleWithEvents(
  deps: WorkflowDeps,
  row: AttemptRow,
  record: AttemptRecord,
  reason: 'retries_exhausted' | 'gone',
): Promise<void> {
  const at = record.completedAt ?? deps.now();
  const delivery = { id: row.id, subscriptionId: row.subscription_id, event: row.event, body: row.body };
  const base = { workspaceId: row.workspace_id, projectId: row.project_id, invocationId: row.invocation_id };
  const operational = isOperationalEvent(row.event);
  const jobs = await deps.db.$transaction(async (tx) => {
    await tx.deliveryAttempt.create({
      data: {
        id: record.attemptId,
        deliveryId: record.deliveryId,
        attempt: record.attempt,
        trigger: record.trigger,
        startedAt: record.startedAt,
        statusCode: record.statusCode,
        latencyMs: record.latencyMs,
        error: record.error,
        responseSnippet: record.responseSnippet,
        retriesStopped: record.retriesStopped,
      },
    });
    await tx.delivery.update({
      where: { id: record.deliveryId },
      data: {
        attempts: record.attempt,
        status: record.status,
        lastStatusCode: record.statusCode,
        nextAttemptAt: null,
        completedAt: at,
        failureReason: reason,
      },
    });
    const jobs: DeliveryJob[] = [];
    if (reason === 'gone') {
      jobs.push(
        ...(await disableSubscription(
          deps,
          tx,
          row,
          delivery,
          'gone',
          row.consecutive_exhaustions,
          record,
          at,
        )),
      );
      return jobs;
    }
    const updated = await tx.deliverySubscription.update({
      where: { id: row.subscription_id },
      data: { consecutiveExhaustions: { increment: 1 } },
    });
    if (updated.consecutiveExhaustions >= EXHAUSTIONS_BEFORE_DISABLE && updated.isActive) {
      jobs.push(
        ...(await disableSubscription(
          deps,
          tx,
          row,
          delivery,
          'retries_exhausted',
          updated.consecutiveExhaustions,
          record,
          at,
        )),
      );
    }
    const outcome = { attempts: record.attempt, statusCode: record.statusCode, error: record.error };
    await deps.audit.record(
      {
        workspaceId: row.workspace_id,
        projectId: row.project_id,
        actor: { kind: 'service', service: 'workflow-delivery' },
        action: 'delivery.attempts_exhausted',
        targetType: 'delivery',
        targetId: row.id,
        data: {
          subscription_id: row.subscription_id,
          event: row.event,
          attempts: record.attempt,
          last_status_code: record.statusCode,
          last_error: record.error,
        },
      },
      tx,
    );
    // Never about a delivery of an operational event: a failing receiver of those would feed itself.
    if (!operational) {
      jobs.push(
        ...(await recordOperationalEvent(tx, {
          ...base,
          type: 'delivery.attempts_exhausted',
          subjectId: record.attemptId,
          body: attemptsExhaustedBody(delivery, outcome, at),
          at,
        })),
      );
    }
    return jobs;
  });
  if (reason === 'retries_exhausted') {
    deps.logger.info(
      { delivery_id: row.id, subscription_id: row.subscription_id },
      'delivery retries exhausted',
    );
  }
  await dispatchDeliveries(deps.db, deps.deliveries, jobs);
}

/** Disables the subscription (if still active), audited and announced to the project's other subscriptions. */
async function disableSubscription(
  deps: WorkflowDeps,
  tx: Tx,
  row: AttemptRow,
  delivery: { id: string; subscriptionId: string; body: string },
  reason: 'gone' | 'retries_exhausted',
  consecutiveExhaustions: number,
  record: AttemptRecord,
  at: Date,
): Promise<DeliveryJob[]> {
  const changed = await tx.deliverySubscription.updateMany({
    where: { id: row.subscription_id, isActive: true },
    data: { isActive: false, disabledReason: reason },
  });
  if (changed.count === 0) return [];
  await deps.audit.record(
    {
      workspaceId: row.workspace_id,
      projectId: row.project_id,
      actor: { kind: 'service', service: 'workflow-delivery' },
      action: 'delivery_subscription.disabled',
      targetType: 'delivery_subscription',
      targetId: row.subscription_id,
      data: {
        reason,
        delivery_id: row.id,
        ...(reason === 'retries_exhausted' ? { consecutive_exhaustions: consecutiveExhaustions } : {}),
      },
    },
    tx,
  );
  deps.logger.warn({ subscription_id: row.subscription_id, reason }, 'delivery subscription disabled');
  return recordOperationalEvent(tx, {
    workspaceId: row.workspace_id,
    projectId: row.project_id,
    invocationId: row.invocation_id,
    type: 'delivery_subscription.disabled',
    subjectId: record.attemptId,
    body: subscriptionDisabledBody(delivery, reason, consecutiveExhaustions, at),
    at,
  });
}
