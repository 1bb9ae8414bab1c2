import type { Actor } from '@svc/auth';
import { deliveryHeaders } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import { newId, traceHeaders } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import type { WorkflowDeps } from '../../deps';
import { testEventBody } from '../../domain/delivery-event';
import { subscriptionNotFound } from '../../domain/errors';
import { sendDelivery } from '../../transport/http-sender';

export type DeliveryTestResult = WorkflowApi.components['schemas']['DeliveryTestResult'];

/**
 * Sends a signed `delivery_subscription.test` to the subscription now (also while it is disabled) and answers
 * the attempt. It is no delivery: no row, no retry, no rate limit or order, and the answer changes nothing but
 * the audit event.
 */
export async function testDeliverySubscription(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  requestId?: string,
): Promise<DeliveryTestResult> {
  const subscription = await deps.db.deliverySubscription.findFirst({
    where: { id, projectId: project.id, deletedAt: null },
  });
  if (!subscription) throw subscriptionNotFound(id);
  const started = deps.now();
  const event = testEventBody(subscription, started);
  const body = JSON.stringify(event);
  const deliveryId = newId('msg');
  const headers = deliveryHeaders({
    secret: deps.signingSecrets.secretsOf(subscription, started),
    deliveryId,
    timestamp: Math.floor(started.getTime() / 1000),
    body,
  });
  const result = await sendDelivery({
    url: subscription.url,
    headers: { ...(headers as unknown as Record<string, string>), ...traceHeaders() },
    body,
    timeoutMs: deps.delivery.timeoutMs,
    allowLoopbackHttp: deps.delivery.allowLoopbackHttp,
    ...(deps.delivery.ca ? { ca: deps.delivery.ca } : {}),
    agents: deps.deliveryAgents,
  });
  const succeeded =
    result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
  await deps.audit.record({
    workspaceId: project.workspace.id,
    projectId: project.id,
    actor,
    action: 'delivery_subscription.tested',
    targetType: 'delivery_subscription',
    targetId: subscription.id,
    data: { delivery_id: deliveryId, status_code: result.status, error: result.error },
    requestId,
  });
  return {
    delivery_id: deliveryId,
    succeeded,
    status_code: result.status,
    latency_ms: Math.round(result.latencyMs),
    error: result.error,
    response_snippet: result.responseSnippet,
    retries_stopped: !succeeded && result.stopRetries,
    body: event,
  };
}
