import type { WorkflowApi } from '@svc/contracts';
import type { DeliveryEventType } from '../domain/delivery-event';
import { redactResponseSnippet } from '../domain/response-snippet';
import type { Delivery, DeliveryAttempt, DeliverySubscription } from '../generated/prisma/client';

type Schemas = WorkflowApi.components['schemas'];
export type DeliverySubscriptionWire = Schemas['DeliverySubscription'];
export type DeliveryWire = Schemas['Delivery'];
export type DeliveryDetailWire = Schemas['DeliveryDetail'];
type DeliveryAttemptWire = Schemas['DeliveryAttempt'];

/** A subscription as shown: never its sealed secrets; the end of a rotation's grace while it lasts. */
export function presentSubscription(row: DeliverySubscription, now: Date): DeliverySubscriptionWire {
  const rotationEnds =
    row.previousSecretSealed && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now
      ? row.previousSecretExpiresAt.toISOString()
      : null;
  return {
    subscription_id: row.id,
    project_id: row.projectId,
    url: row.url,
    events: (Array.isArray(row.events) ? row.events : []) as DeliveryEventType[],
    description: row.description,
    is_active: row.isActive,
    disabled_reason: row.disabledReason,
    secret_rotation_ends_at: rotationEnds,
    rate_limit_per_second: row.rateLimitPerSecond,
    ordered: row.ordered,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function presentDelivery(row: Delivery): DeliveryWire {
  return {
    delivery_id: row.id,
    subscription_id: row.subscriptionId,
    invocation_id: row.invocationId,
    event: row.event as DeliveryEventType,
    status: row.status as Schemas['DeliveryStatus'],
    attempts: row.attempts,
    next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
    last_status_code: row.lastStatusCode,
    failure_reason: row.failureReason as DeliveryWire['failure_reason'],
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

function presentAttempt(row: DeliveryAttempt): DeliveryAttemptWire {
  return {
    attempt: row.attempt,
    started_at: row.startedAt.toISOString(),
    status_code: row.statusCode,
    latency_ms: row.latencyMs,
    error: row.error,
    // Attempts recorded before answers were redacted on arrival are redacted on the way out.
    response_snippet: redactResponseSnippet(row.responseSnippet),
    retries_stopped: row.retriesStopped,
    trigger: row.trigger as DeliveryAttemptWire['trigger'],
  };
}

/** One delivery with its body (as sent) and every attempt, in order. */
export function presentDeliveryDetail(row: Delivery, attempts: DeliveryAttempt[]): DeliveryDetailWire {
  return {
    ...presentDelivery(row),
    body: JSON.parse(row.body) as DeliveryDetailWire['body'],
    attempt_log: attempts.map(presentAttempt),
  };
}
