import type { WorkflowApi } from '@svc/sdk';

export type DeliveryEventType = WorkflowApi.components['schemas']['DeliveryEventType'];

/** Every event a subscription can ask for, with what it means for a person. */
export const EVENT_TYPES: { type: DeliveryEventType; about: string }[] = [
  { type: 'invocation.completed', about: 'an invocation completed with its artifact' },
  { type: 'invocation.waiting_for_artifact', about: 'an invocation waits for its artifact' },
  { type: 'invocation.failed', about: 'an invocation failed' },
  { type: 'invocation.cancelled', about: 'an invocation was cancelled' },
  { type: 'invocation.artifact_rejected', about: 'an artifact was rejected' },
  { type: 'delivery.attempts_exhausted', about: 'a delivery used every retry' },
  { type: 'delivery_subscription.disabled', about: 'a subscription was disabled automatically' },
];

/** Why a subscription is disabled, in words. */
export function disabledReasonWords(reason: string | null): string {
  switch (reason) {
    case 'gone':
      return 'the endpoint answered 410 Gone';
    case 'retries_exhausted':
      return 'its deliveries used every retry five times in a row';
    case 'manual':
      return 'disabled by hand';
    default:
      return 'disabled';
  }
}
