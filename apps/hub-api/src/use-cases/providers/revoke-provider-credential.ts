import type { ParticipantActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';

/**
 * Deletes the workspace's credential for a provider (the sealed secret goes with it). Runtime credentials
 * issued afterwards no longer fall back to it.
 */
export async function revokeProviderCredential(
  deps: HubDeps,
  actor: ParticipantActor,
  workspaceId: string,
  provider: string,
  requestId?: string,
): Promise<void> {
  await deps.db.$transaction(async (tx) => {
    const existing = await tx.providerCredential.findUnique({
      where: { workspaceId_provider: { workspaceId, provider } },
    });
    if (!existing) {
      throw new AppError({
        status: 404,
        code: 'provider_credential_not_found',
        detail: `This workspace has no credential for provider '${provider}'.`,
      });
    }
    await tx.providerCredential.delete({ where: { id: existing.id } });
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'credential.provider.revoked',
        targetType: 'provider_credential',
        targetId: existing.id,
        data: { provider, last4: existing.last4 },
        requestId,
      },
      tx,
    );
  });
}
