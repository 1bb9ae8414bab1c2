import type { Actor } from '@svc/auth';
import { generateSigningSecret } from '@svc/contracts';
import type { ProjectRef } from '../../auth/project-directory';
import { lockSubscription } from '../../data/delivery-subscriptions.locks';
import type { WorkflowDeps } from '../../deps';
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../../domain/delivery-subscription';
import { requireSecretBox } from '../../domain/signing-secrets';
import type { DeliverySubscription } from '../../generated/prisma/client';

/**
 * A new signing secret (returned once). The current one becomes the previous secret and keeps signing for
 * `graceSeconds` (0: it stops at once); a previous secret from an earlier rotation is dropped.
 */
export async function rotateDeliverySubscriptionSecret(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  graceSeconds: number = DEFAULT_ROTATION_GRACE_SECONDS,
  requestId?: string,
): Promise<{ subscription: DeliverySubscription; signingSecret: string }> {
  const box = requireSecretBox(deps.delivery.secrets);
  const signingSecret = generateSigningSecret();
  const now = deps.now();
  const row = await deps.db.$transaction(async (tx) => {
    const current = await lockSubscription(tx, project.id, id);
    const grace = graceSeconds > 0;
    const previousSecretExpiresAt = grace ? new Date(now.getTime() + graceSeconds * 1000) : null;
    const updated = await tx.deliverySubscription.update({
      where: { id },
      data: {
        secretSealed: box.seal(signingSecret, id),
        previousSecretSealed: grace ? current.secretSealed : null,
        previousSecretExpiresAt,
        updatedAt: now,
      },
    });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery_subscription.secret_rotated',
        targetType: 'delivery_subscription',
        targetId: id,
        data: {
          grace_seconds: graceSeconds,
          previous_secret_expires_at: previousSecretExpiresAt?.toISOString() ?? null,
        },
        requestId,
      },
      tx,
    );
    return updated;
  });
  return { subscription: row, signingSecret };
}
