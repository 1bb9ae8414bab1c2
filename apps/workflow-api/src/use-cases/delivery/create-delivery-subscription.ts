import type { Actor } from '@svc/auth';
import { generateSigningSecret } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import type { WorkflowDeps } from '../../deps';
import { checkedSubscriptionUrl, descriptionOf, uniqueEvents } from '../../domain/delivery-subscription';
import { requireSecretBox } from '../../domain/signing-secrets';
import type { DeliverySubscription } from '../../generated/prisma/client';

/**
 * Saves a subscription after the URL passed the SSRF check, with a new signing secret sealed for this
 * subscription only. The plain secret is returned to be shown once and is never stored or audited.
 */
export async function createDeliverySubscription(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  input: WorkflowApi.components['schemas']['DeliverySubscriptionCreateRequest'],
  requestId?: string,
): Promise<{ subscription: DeliverySubscription; signingSecret: string }> {
  const box = requireSecretBox(deps.delivery.secrets);
  const url = await checkedSubscriptionUrl(input.url, deps.delivery.allowLoopbackHttp);
  const events = uniqueEvents(input.events);
  const id = newId('dsub');
  const signingSecret = generateSigningSecret();
  const now = deps.now();
  const row = await deps.db.$transaction(async (tx) => {
    const created = await tx.deliverySubscription.create({
      data: {
        id,
        workspaceId: project.workspace.id,
        projectId: project.id,
        url: url.href,
        events,
        description: descriptionOf(input.description),
        secretSealed: box.seal(signingSecret, id),
        rateLimitPerSecond: input.rate_limit_per_second ?? null,
        ordered: input.ordered ?? false,
        createdAt: now,
        updatedAt: now,
      },
    });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery_subscription.created',
        targetType: 'delivery_subscription',
        targetId: id,
        // The origin only: a path or query string may carry a receiver's own token.
        data: {
          url_origin: url.origin,
          events,
          rate_limit_per_second: input.rate_limit_per_second ?? null,
          ordered: input.ordered ?? false,
        },
        requestId,
      },
      tx,
    );
    return created;
  });
  return { subscription: row, signingSecret };
}
