import type { HubDeps } from '../deps';
import { introspectApiKey } from '../use-cases/introspect-api-key';
import type { HubInternalHandlers } from './types';

export function internalHandlers(deps: HubDeps): Pick<HubInternalHandlers, 'introspectApiKey'> {
  return {
    async introspectApiKey({ body }) {
      return { status: 200, body: { data: await introspectApiKey(deps, body.key) } };
    },
  };
}
