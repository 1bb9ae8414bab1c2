import { authenticateApiKey } from '../../data/api-keys.lookups';
import type { ApiKeyRecord } from '../../data/api-keys.lookups';
import type { HubDeps } from '../../deps';
import type { Workspace } from '../../generated/prisma/client';

/** How long another service may trust an introspection answer, at most. */
export const INTROSPECTION_CACHE_SECONDS = 30;

/**
 * What introspecting a presented key found: the live key and its workspace, or nothing (inactive). The
 * answer may be cached for `cacheTtlSeconds`, never past the key's expiry.
 */
export type ApiKeyIntrospection =
  | { active: false; cacheTtlSeconds: number }
  | { active: true; cacheTtlSeconds: number; key: ApiKeyRecord; workspace: Workspace };

/** What another service needs to authorize a presented workspace key; inactive keys reveal nothing else. */
export async function introspectApiKey(deps: HubDeps, raw: string): Promise<ApiKeyIntrospection> {
  const key = await authenticateApiKey(deps.db, raw, { now: deps.now(), logger: deps.logger });
  if (!key) return { active: false, cacheTtlSeconds: INTROSPECTION_CACHE_SECONDS };
  const workspace = await deps.db.workspace.findUniqueOrThrow({ where: { id: key.workspaceId } });
  const expiresIn = key.expiresAt
    ? Math.floor((key.expiresAt.getTime() - deps.now().getTime()) / 1000)
    : Infinity;
  return {
    active: true,
    key,
    workspace,
    cacheTtlSeconds: Math.max(0, Math.min(INTROSPECTION_CACHE_SECONDS, expiresIn)),
  };
}
