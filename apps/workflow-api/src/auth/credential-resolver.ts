import { AGENT_TOKEN_SCOPES, TokenError } from '@svc/auth';
import type { CredentialResolver, TokenVerifier } from '@svc/auth';
import type { AgentStanding } from './agent-standing';
import type { KeyIntrospector } from './key-introspector';

/**
 * Workspace API keys (`X-API-Key`, checked through the hub's introspection) and the hub's bearer tokens:
 * participants (approvals) and agents (`AGENT_TOKEN`, stage work), verified against the hub's JWKS. An agent
 * token must also have its agent in standing (not evicted or deleted, decision 60); a participant's
 * membership and role are checked per request by the access guard.
 */
export function createWorkflowCredentialResolver(deps: {
  keys: KeyIntrospector;
  tokens?: TokenVerifier;
  agents?: AgentStanding;
}): CredentialResolver {
  return {
    apiKey: (raw) => deps.keys.introspect(raw),
    ...(deps.tokens
      ? {
          async bearer(token: string) {
            let verified;
            try {
              verified = await deps.tokens!.verify(token, { audience: ['participant', 'agent'] });
            } catch (error) {
              if (error instanceof TokenError) return null;
              throw error;
            }
            if (verified.aud === 'participant') {
              const email = typeof verified.claims.email === 'string' ? verified.claims.email : '';
              return {
                kind: 'participant' as const,
                participantId: verified.sub,
                email,
                tokenId: verified.jti,
              };
            }
            const workspaceId = verified.claims.workspace_id;
            if (typeof workspaceId !== 'string') return null;
            if (deps.agents && !(await deps.agents.admits(verified.sub, token, verified.exp * 1000)))
              return null;
            const rti = verified.claims.runtime_instance_id;
            return {
              kind: 'agent' as const,
              agentId: verified.sub,
              workspaceId,
              runtimeInstanceId: typeof rti === 'string' ? rti : null,
              scopes: [...AGENT_TOKEN_SCOPES],
            };
          },
        }
      : {}),
  };
}
