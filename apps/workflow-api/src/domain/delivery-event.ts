import type { WorkflowApi } from '@svc/contracts';
import type { Artifact, Invocation } from '../generated/prisma/client';

type Schemas = WorkflowApi.components['schemas'];
export type DeliveryEventType = Schemas['DeliveryEventType'];
export type DeliveryEventBody = Schemas['DeliveryEventBody'];

/** The documented body (`DeliveryEventBody` in the contract); its exact text is what is signed. */
export function deliveryBody(
  event: DeliveryEventType,
  invocation: Invocation,
  artifact: Pick<Artifact, 'id' | 'schemaId' | 'schemaName' | 'schemaVersion'> | null,
  at: Date,
): string {
  const body: DeliveryEventBody = {
    type: event,
    timestamp: at.toISOString(),
    data: {
      workspace_id: invocation.workspaceId,
      project_id: invocation.projectId,
      invocation_id: invocation.id,
      state: invocation.state as DeliveryEventBody['data']['state'],
      attention: invocation.attention as DeliveryEventBody['data']['attention'],
      attention_reason: invocation.attentionReason,
      correlation_id: invocation.correlationId,
      ...(event === 'invocation.failed' && invocation.failure
        ? { failure: invocation.failure as DeliveryEventBody['data']['failure'] }
        : {}),
      artifact: artifact
        ? {
            artifact_id: artifact.id,
            schema_id: artifact.schemaId,
            schema_name: artifact.schemaName,
            schema_version: artifact.schemaVersion,
          }
        : null,
    },
  };
  return JSON.stringify(body);
}

/** The event types the service raises about deliveries themselves. */
export const OPERATIONAL_EVENTS = ['delivery.attempts_exhausted', 'delivery_subscription.disabled'] as const;
export type OperationalEventType = (typeof OPERATIONAL_EVENTS)[number];

export const isOperationalEvent = (event: string): event is OperationalEventType =>
  (OPERATIONAL_EVENTS as readonly string[]).includes(event);

type InvocationData = Omit<DeliveryEventBody['data'], 'delivery' | 'subscription'>;

/** The invocation part of a stored body's `data` (an operational body's own members left out). */
function invocationData(body: string): InvocationData {
  const { data } = JSON.parse(body) as DeliveryEventBody;
  const { delivery: _delivery, subscription: _subscription, ...rest } = data;
  return rest;
}

/** `delivery.attempts_exhausted` about a stored delivery: its invocation as it carried it, and the delivery. */
export function attemptsExhaustedBody(
  delivery: { id: string; subscriptionId: string; event: string; body: string },
  outcome: { attempts: number; statusCode: number | null; error: string | null },
  at: Date,
): string {
  const body: DeliveryEventBody = {
    type: 'delivery.attempts_exhausted',
    timestamp: at.toISOString(),
    data: {
      ...invocationData(delivery.body),
      delivery: {
        delivery_id: delivery.id,
        subscription_id: delivery.subscriptionId,
        event: delivery.event as DeliveryEventType,
        attempts: outcome.attempts,
        last_status_code: outcome.statusCode,
        last_error: outcome.error,
      },
    },
  };
  return JSON.stringify(body);
}

/** `delivery_subscription.disabled`: the subscription, why, and the delivery (with its invocation) that tipped it. */
export function subscriptionDisabledBody(
  delivery: { id: string; subscriptionId: string; body: string },
  reason: 'gone' | 'retries_exhausted',
  consecutiveExhaustions: number,
  at: Date,
): string {
  const body: DeliveryEventBody = {
    type: 'delivery_subscription.disabled',
    timestamp: at.toISOString(),
    data: {
      ...invocationData(delivery.body),
      subscription: {
        subscription_id: delivery.subscriptionId,
        reason,
        delivery_id: delivery.id,
        consecutive_exhaustions: consecutiveExhaustions,
      },
    },
  };
  return JSON.stringify(body);
}

/** `delivery_subscription.test`: names the subscription only. */
export function testEventBody(
  subscription: { id: string; workspaceId: string; projectId: string },
  at: Date,
): Schemas['DeliverySubscriptionTestEventBody'] {
  return {
    type: 'delivery_subscription.test',
    timestamp: at.toISOString(),
    data: {
      workspace_id: subscription.workspaceId,
      project_id: subscription.projectId,
      subscription_id: subscription.id,
    },
  };
}
