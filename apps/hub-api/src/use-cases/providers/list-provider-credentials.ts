import type { HubDeps } from '../../deps';
import type { ProviderCredential } from '../../generated/prisma/client';

/** The workspace's own provider credentials by provider (presented as metadata only, never the secret). */
export function listProviderCredentials(deps: HubDeps, workspaceId: string): Promise<ProviderCredential[]> {
  return deps.db.providerCredential.findMany({ where: { workspaceId }, orderBy: { provider: 'asc' } });
}
