import type { HubDeps } from '../deps';
import { openProviderCredential } from '../use-cases/providers/open-provider-credential';
import type { HubInternalHandlers } from './types';

/** A workspace's provider credential for the platform's other services (service actor only). */
export function internalProviderHandlers(
  deps: HubDeps,
): Pick<HubInternalHandlers, 'getInternalProviderCredential'> {
  return {
    async getInternalProviderCredential({ params }) {
      const credential = await openProviderCredential(deps, params.workspaceId, params.provider);
      return {
        status: 200,
        body: {
          data: {
            provider: credential.provider,
            secret: credential.secret,
            last4: credential.last4,
            rotated_at: credential.rotatedAt.toISOString(),
          },
        },
      };
    },
  };
}
