import { AGENT_TOKEN_SCOPES, safeEqual, TokenError } from '@svc/auth';
import type { ApiKeyActor, CredentialResolver } from '@svc/auth';
import type { Logger } from '@svc/service-kit';
import type { Db } from '../db';
import { authenticateApiKey } from '../data/api-keys.lookups';
import type { ApiKeyRecord } from '../data/api-keys.lookups';
import type { ApiKeyCache } from './api-key-cache';
import type { SigningKeyRing } from './signing-keys';

export function apiKeyActor(key: ApiKeyRecord): ApiKeyActor {
  return {
    kind: 'api_key',
    keyId: key.id,
    workspaceId: key.workspaceId,
    scopes: key.scopes,
    prefix: key.prefix,
  };
}

/** How each credential the hub accepts becomes an actor. */
export function createHubCredentialResolver(deps: {
  db: Db;
  keys: SigningKeyRing;
  serviceToken: string;
  logger: Logger;
  /** Short-lived cache of key rows for the hub's own requests; without it every request reads the database. */
  apiKeys?: ApiKeyCache;
}): CredentialResolver {
  return {
    async bearer(token) {
      let verified;
      try {
        verified = await deps.keys.verifier.verify(token, { audience: ['participant', 'agent'] });
      } catch (error) {
        if (error instanceof TokenError) return null;
        throw error;
      }
      if (verified.aud === 'participant') {
        const email = typeof verified.claims.email === 'string' ? verified.claims.email : '';
        return { kind: 'participant', participantId: verified.sub, email, tokenId: verified.jti };
      }
      // Agents: the current row decides, so eviction takes effect at once.
      const agent = await deps.db.agent.findUnique({
        where: { id: verified.sub },
        select: { id: true, workspaceId: true, runtimeInstanceId: true, status: true },
      });
      if (!agent || agent.status === 'evicted') return null;
      return {
        kind: 'agent',
        agentId: agent.id,
        workspaceId: agent.workspaceId,
        runtimeInstanceId: agent.runtimeInstanceId,
        scopes: [...AGENT_TOKEN_SCOPES],
      };
    },
    async apiKey(raw) {
      const key = deps.apiKeys
        ? await deps.apiKeys.authenticate(raw)
        : await authenticateApiKey(deps.db, raw, { logger: deps.logger });
      return key ? apiKeyActor(key) : null;
    },
    async serviceToken(raw) {
      return safeEqual(raw, deps.serviceToken) ? { kind: 'service', service: 'internal' } : null;
    },
  };
}
