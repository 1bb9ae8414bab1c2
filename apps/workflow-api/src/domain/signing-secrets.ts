import { AppError } from '@svc/service-kit';
import type { SecretBox } from '@svc/service-kit';
import type { DeliverySubscription } from '../generated/prisma/client';

/** Most opened secrets kept; beyond it the cache starts again empty. */
const MAX_OPENED_SECRETS = 1000;

/**
 * Opened signing secrets by sealed value (bounded), so a busy subscription is not decrypted for every attempt.
 * One per process, built by the wiring and passed in the deps.
 */
export interface SigningSecretCache {
  /** The subscription's signing secrets: the current one, plus the previous one during a rotation's grace. */
  secretsOf(
    subscription: Pick<
      DeliverySubscription,
      'id' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'
    >,
    now: Date,
  ): string[];
}

export function createSigningSecretCache(box: SecretBox | null): SigningSecretCache {
  const opened = new Map<string, string>();
  const open = (sealed: string, subscriptionId: string): string => {
    const key = `${subscriptionId}\u0000${sealed}`;
    let plain = opened.get(key);
    if (plain === undefined) {
      if (!box) throw new Error('WORKFLOW_ENCRYPTION_KEYS is not configured; deliveries cannot be signed');
      plain = box.open(sealed, subscriptionId);
      if (opened.size >= MAX_OPENED_SECRETS) opened.clear();
      opened.set(key, plain);
    }
    return plain;
  };
  return {
    secretsOf(subscription, now) {
      const secrets = [open(subscription.secretSealed, subscription.id)];
      if (
        subscription.previousSecretSealed &&
        subscription.previousSecretExpiresAt &&
        subscription.previousSecretExpiresAt > now
      ) {
        secrets.push(open(subscription.previousSecretSealed, subscription.id));
      }
      return secrets;
    },
  };
}

/** The box that seals signing secrets; 503 `delivery_not_configured` when the deployment has none. */
export function requireSecretBox(box: SecretBox | null): SecretBox {
  if (!box) {
    throw new AppError({
      status: 503,
      code: 'delivery_not_configured',
      detail: 'Signed delivery is not configured on this deployment (no encryption key for signing secrets).',
      message: 'WORKFLOW_ENCRYPTION_KEYS is not configured; delivery subscriptions cannot be managed',
    });
  }
  return box;
}
