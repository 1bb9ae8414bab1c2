import type { CredentialResolver } from '@svc/auth';
import type { KeyIntrospector } from './key-introspector';

/** Workspace API keys (`X-API-Key`), checked through the hub's introspection. */
export function createWorkflowCredentialResolver(deps: { keys: KeyIntrospector }): CredentialResolver {
  return {
    apiKey: (raw) => deps.keys.introspect(raw),
  };
}
