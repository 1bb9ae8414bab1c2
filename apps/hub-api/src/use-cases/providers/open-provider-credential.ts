import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { providerCredentialAad } from '../../domain/provider-credentials';

export interface OpenedProviderCredential {
  provider: string;
  secret: string;
  last4: string;
  rotatedAt: Date;
}

/**
 * The workspace's credential for a provider with its secret opened, for the platform's own services only (the
 * Workflow API's model assistance). 404 `provider_credential_not_found` when the workspace holds none.
 */
export async function openProviderCredential(
  deps: HubDeps,
  workspaceId: string,
  provider: string,
): Promise<OpenedProviderCredential> {
  const row = await deps.db.providerCredential.findUnique({
    where: { workspaceId_provider: { workspaceId, provider } },
  });
  if (!row) {
    throw new AppError({
      status: 404,
      code: 'provider_credential_not_found',
      detail: `The workspace holds no credential for provider '${provider}'.`,
    });
  }
  return {
    provider: row.provider,
    secret: deps.box.open(row.secretCiphertext, providerCredentialAad(workspaceId, provider)),
    last4: row.last4,
    rotatedAt: row.rotatedAt,
  };
}
