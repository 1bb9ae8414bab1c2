import { authenticateApiKey } from '../auth/credential-resolver';
import type { HubDeps } from '../deps';

export const INTROSPECTION_CACHE_SECONDS = 30;

/** What another service needs to authorize a presented workspace key; inactive keys reveal nothing else. */
export async function introspectApiKey(deps: HubDeps, raw: string) {
  const key = await authenticateApiKey(deps.db, raw, { now: deps.now(), logger: deps.logger });
  if (!key) return { active: false, cache_ttl_seconds: INTROSPECTION_CACHE_SECONDS } as const;
  const workspace = await deps.db.workspace.findUniqueOrThrow({ where: { id: key.workspaceId } });
  const expiresIn = key.expiresAt
    ? Math.floor((key.expiresAt.getTime() - deps.now().getTime()) / 1000)
    : Infinity;
  return {
    active: true,
    cache_ttl_seconds: Math.max(0, Math.min(INTROSPECTION_CACHE_SECONDS, expiresIn)),
    key_id: key.id,
    prefix: key.prefix,
    workspace_id: workspace.id,
    workspace_slug: workspace.slug,
    scopes: key.scopes,
    expires_at: key.expiresAt ? key.expiresAt.toISOString() : null,
  };
}
