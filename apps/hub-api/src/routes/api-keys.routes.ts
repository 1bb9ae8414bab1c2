import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentApiKey } from '../presenters/api-keys';
import { createApiKey } from '../use-cases/api-keys/create-api-key';
import { getApiKey } from '../use-cases/api-keys/get-api-key';
import { listApiKeys } from '../use-cases/api-keys/list-api-keys';
import { revokeApiKey } from '../use-cases/api-keys/revoke-api-key';
import type { HubHandlers } from './types';
import { actorOf, participantOf } from './types';

export function apiKeyHandlers(
  deps: HubDeps,
): HubHandlers<'listApiKeys' | 'createApiKey' | 'getApiKey' | 'revokeApiKey'> {
  return {
    async listApiKeys(ctx) {
      const keys = await listApiKeys(deps, workspaceOf(ctx).id, {
        includeRevoked: ctx.query.include_revoked,
      });
      return { status: 200, body: { data: keys.map(presentApiKey) } };
    },
    async createApiKey(ctx) {
      const { body } = ctx;
      const created = await createApiKey(deps, participantOf(ctx.actor), workspaceOf(ctx).id, {
        name: body.name,
        preset: body.preset,
        scopes: body.scopes,
        expiresAt: body.expires_at,
        requestId: ctx.requestId,
      });
      return {
        status: 201,
        body: { data: { ...presentApiKey(created.record), key: created.key } },
        headers: { 'Cache-Control': 'no-store' },
      };
    },
    async getApiKey(ctx) {
      const key = await getApiKey(deps, workspaceOf(ctx).id, ctx.params.keyId);
      return { status: 200, body: { data: presentApiKey(key) } };
    },
    async revokeApiKey(ctx) {
      const key = await revokeApiKey(
        deps,
        actorOf(ctx.actor),
        workspaceOf(ctx).id,
        ctx.params.keyId,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentApiKey(key) } };
    },
  };
}
