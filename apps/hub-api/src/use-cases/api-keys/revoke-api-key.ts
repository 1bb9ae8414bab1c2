import type { Actor } from '@svc/auth';
import { apiKeyNotFound } from '../../data/api-keys.lookups';
import type { HubDeps } from '../../deps';

/**
 * Revokes a key at once: this replica forgets the key as soon as the revocation is committed; other hub
 * replicas stop accepting it within their key-cache time (10 s), services caching introspection within 30 s.
 * Revoking a revoked key changes nothing and returns it as it is.
 */
export async function revokeApiKey(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  keyId: string,
  requestId?: string,
) {
  const result = await deps.db.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({ where: { id: keyId, workspaceId } });
    if (!key) throw apiKeyNotFound();
    if (key.revokedAt) return key;
    const revoked = await tx.apiKey.update({ where: { id: key.id }, data: { revokedAt: deps.now() } });
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'api_key.revoked',
        targetType: 'api_key',
        targetId: key.id,
        data: { prefix: key.prefix },
        requestId,
      },
      tx,
    );
    return revoked;
  });
  deps.apiKeys.invalidate(keyId);
  return result;
}
