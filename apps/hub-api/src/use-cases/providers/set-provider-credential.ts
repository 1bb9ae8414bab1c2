import type { ParticipantActor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';
import type { ProviderCredential } from '../../generated/prisma/client';
import { catalogProviders } from '../../data/provider-models.lookups';
import { providerCredentialAad } from '../../domain/provider-credentials';

/**
 * Sets or rotates the workspace's own credential for a catalog provider, the fallback runtime credentials
 * use when the hub has no hosted authorization for the provider. The secret is sealed (bound to workspace and
 * provider) and never returned; only its last four characters are kept in the clear.
 */
export async function setProviderCredential(
  deps: HubDeps,
  actor: ParticipantActor,
  workspaceId: string,
  input: { provider: string; secret: string; requestId?: string },
): Promise<{ credential: ProviderCredential; created: boolean }> {
  const providers = await catalogProviders(deps.db);
  if (!providers.includes(input.provider)) {
    throw new AppError({
      status: 400,
      code: 'provider_unknown',
      detail: `'${input.provider}' is not a provider of the catalog; use one of ${providers.join(', ')}.`,
      extra: { providers },
    });
  }
  if (input.secret.trim() !== input.secret) {
    throw new AppError({
      status: 400,
      code: 'provider_secret_invalid',
      detail: 'secret must not start or end with whitespace (check for a copied line break).',
      extra: { field: 'secret' },
    });
  }
  const sealed = deps.box.seal(input.secret, providerCredentialAad(workspaceId, input.provider));
  // By code point: slicing UTF-16 units could keep half a surrogate pair, which Postgres cannot store.
  const last4 = [...input.secret].slice(-4).join('');

  const attempt = () =>
    deps.db.$transaction(async (tx) => {
      const now = deps.now();
      const existing = await tx.providerCredential.findUnique({
        where: { workspaceId_provider: { workspaceId, provider: input.provider } },
      });
      const credential = existing
        ? await tx.providerCredential.update({
            where: { id: existing.id },
            data: { secretCiphertext: sealed, last4, rotatedAt: now },
          })
        : await tx.providerCredential.create({
            data: {
              id: newId('pvc'),
              workspaceId,
              provider: input.provider,
              secretCiphertext: sealed,
              last4,
              createdById: actor.participantId,
              createdAt: now,
              rotatedAt: now,
            },
          });
      await deps.audit.record(
        {
          workspaceId,
          actor,
          action: existing ? 'credential.provider.rotated' : 'credential.provider.set',
          targetType: 'provider_credential',
          targetId: credential.id,
          data: { provider: input.provider, last4 },
          requestId: input.requestId,
        },
        tx,
      );
      return { credential, created: !existing };
    });

  try {
    return await attempt();
  } catch (error) {
    // Two first-time sets raced; the loser finds the winner's row and rotates it.
    if (isUniqueViolation(error)) return attempt();
    throw error;
  }
}
