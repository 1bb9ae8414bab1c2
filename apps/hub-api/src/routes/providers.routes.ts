import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentProviderCredential, presentProviderModel } from '../presenters/providers';
import { listProviderCredentials } from '../use-cases/providers/list-provider-credentials';
import { listProviderModels } from '../use-cases/providers/list-provider-models';
import { revokeProviderCredential } from '../use-cases/providers/revoke-provider-credential';
import { setProviderCredential } from '../use-cases/providers/set-provider-credential';
import type { HubHandlers } from './types';
import { participantOf } from './types';

export function providerHandlers(
  deps: HubDeps,
): HubHandlers<
  'listProviderModels' | 'listProviderCredentials' | 'setProviderCredential' | 'revokeProviderCredential'
> {
  return {
    async listProviderModels() {
      const models = await listProviderModels(deps);
      return { status: 200, body: { data: models.map(presentProviderModel) } };
    },
    async listProviderCredentials(ctx) {
      const credentials = await listProviderCredentials(deps, workspaceOf(ctx).id);
      return { status: 200, body: { data: credentials.map(presentProviderCredential) } };
    },
    async setProviderCredential(ctx) {
      const { credential, created } = await setProviderCredential(
        deps,
        participantOf(ctx.actor),
        workspaceOf(ctx).id,
        { provider: ctx.params.provider, secret: ctx.body.secret, requestId: ctx.requestId },
      );
      return { status: created ? 201 : 200, body: { data: presentProviderCredential(credential) } };
    },
    async revokeProviderCredential(ctx) {
      await revokeProviderCredential(
        deps,
        participantOf(ctx.actor),
        workspaceOf(ctx).id,
        ctx.params.provider,
        ctx.requestId,
      );
      return { status: 204 };
    },
  };
}
