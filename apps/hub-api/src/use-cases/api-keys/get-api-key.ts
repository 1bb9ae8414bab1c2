import { apiKeyNotFound } from '../../data/api-keys.lookups';
import type { HubDeps } from '../../deps';
import type { ApiKey } from '../../generated/prisma/client';

/** One API key of the workspace (revoked or not); a key of another workspace is not found. */
export async function getApiKey(deps: HubDeps, workspaceId: string, keyId: string): Promise<ApiKey> {
  const key = await deps.db.apiKey.findFirst({ where: { id: keyId, workspaceId } });
  if (!key) throw apiKeyNotFound();
  return key;
}
