import type { HubDeps } from '../../deps';
import type { ApiKey } from '../../generated/prisma/client';

/** The API keys of a workspace, oldest first; revoked keys only when asked for. */
export function listApiKeys(
  deps: HubDeps,
  workspaceId: string,
  filters: { includeRevoked?: boolean },
): Promise<ApiKey[]> {
  return deps.db.apiKey.findMany({
    where: { workspaceId, ...(filters.includeRevoked ? {} : { revokedAt: null }) },
    orderBy: { createdAt: 'asc' },
  });
}
