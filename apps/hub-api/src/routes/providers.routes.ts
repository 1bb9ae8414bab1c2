import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentProviderCredential, presentProviderModel } from '../presenters/runtime';
import { revokeProviderCredential } from '../use-cases/revoke-provider-credential';
import { setProviderCredential } from '../use-cases/set-provider-credential';
import type { HubHandlers } from './types';
import { participantOf } from './types';

export function providerHandlers(
  deps: HubDeps,
): HubHandlers<
  'listProviderModels' | 'listProviderCredentials' | 'setProviderCredential' | 'revokeProviderCredential'
> {
  return {
    async listProviderModels() {
      const models = await deps.db.providerModel.findMany({
        where: { active: true },
        orderBy: { id: 'asc' },
      });
      return { status: 200, body: { data: models.map(presentProviderModel) } };
    },
    async listProviderCredentials(ctx) {
      const credentials = await deps.db.providerCredential.findMany({
        where: { workspaceId: workspaceOf(ctx).id },
        orderBy: { provider: 'asc' },
      });
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
