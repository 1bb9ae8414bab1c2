import type { HubDeps } from '../deps';
import { presentApiKeyIntrospection } from '../presenters/api-keys';
import { introspectApiKey } from '../use-cases/internal/introspect-api-key';
import type { HubInternalHandlers } from './types';

export function internalHandlers(deps: HubDeps): Pick<HubInternalHandlers, 'introspectApiKey'> {
  return {
    async introspectApiKey({ body }) {
      const introspection = await introspectApiKey(deps, body.key);
      return { status: 200, body: { data: presentApiKeyIntrospection(introspection) } };
    },
  };
}
