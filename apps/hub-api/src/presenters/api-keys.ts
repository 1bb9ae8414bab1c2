import type { HubApi, HubInternalApi } from '@svc/contracts';
import type { ApiKey } from '../generated/prisma/client';
import type { ApiKeyIntrospection } from '../use-cases/internal/introspect-api-key';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export function presentApiKey(k: ApiKey): Schemas['ApiKey'] {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    preset: (k.preset as Schemas['ScopePreset'] | null) ?? null,
    created_at: iso(k.createdAt),
    expires_at: isoOrNull(k.expiresAt),
    revoked_at: isoOrNull(k.revokedAt),
    last_used_at: isoOrNull(k.lastUsedAt),
    created_by: k.createdById,
  };
}

/** What another service learns about a presented key; an inactive key reveals nothing else. */
export function presentApiKeyIntrospection(
  i: ApiKeyIntrospection,
): HubInternalApi.components['schemas']['ApiKeyIntrospection'] {
  if (!i.active) return { active: false, cache_ttl_seconds: i.cacheTtlSeconds };
  return {
    active: true,
    cache_ttl_seconds: i.cacheTtlSeconds,
    key_id: i.key.id,
    prefix: i.key.prefix,
    workspace_id: i.workspace.id,
    workspace_slug: i.workspace.slug,
    scopes: i.key.scopes,
    expires_at: i.key.expiresAt ? i.key.expiresAt.toISOString() : null,
  };
}
