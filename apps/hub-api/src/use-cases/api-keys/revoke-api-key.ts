import type { Actor } from '@svc/auth';
import { apiKeyNotFound } from '../../data/api-keys.lookups';
import type { HubDeps } from '../../deps';

/**
 * Revokes a key at once: this replica forgets the key as soon as the revocation is committed, and a notice
 * (decision 47) makes other hub replicas and services caching introspection drop it within a second; when a
 * notice is lost their cache times (10 s, 30 s) still bound the delay. Revoking a revoked key changes nothing
 * and returns it as it is.
 */
export async function revokeApiKey(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  keyId: string,
  requestId?: string,
) {
  let revokedNow = false;
  const result = await deps.db.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({ where: { id: keyId, workspaceId } });
    if (!key) throw apiKeyNotFound();
    if (key.revokedAt) return key;
    const revoked = await tx.apiKey.update({ where: { id: key.id }, data: { revokedAt: deps.now() } });
    revokedNow = true;
    // A runtime host whose heartbeats came with this key is shown with its key revoked.
    await tx.runtimeHost.updateMany({
      where: { workspaceId, heartbeatApiKeyId: key.id },
      data: { heartbeatKeyRevokedAt: revoked.revokedAt },
    });
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
  if (revokedNow)
    await deps.notices.publish({ kind: 'api_key_revoked', key_id: keyId, workspace_id: workspaceId });
  return result;
}
