import type { HubApi } from '@svc/contracts';
import type { ProviderCredential, ProviderModel } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

export function presentProviderModel(m: ProviderModel): Schemas['ProviderModel'] {
  return { id: m.id, provider: m.provider, model: m.model, display_name: m.displayName };
}

/** Metadata only: never the secret or its sealed form. */
export function presentProviderCredential(c: ProviderCredential): Schemas['ProviderCredential'] {
  return {
    provider: c.provider,
    last4: c.last4,
    created_at: c.createdAt.toISOString(),
    rotated_at: c.rotatedAt.toISOString(),
  };
}
