import type { HubInternalClient } from '@svc/contracts';
import { AppError } from '@svc/service-kit';

export interface Membership {
  role: 'owner' | 'admin' | 'member' | 'viewer';
}

/** Role changes reach this service within this long. */
const MEMBER_CACHE_MS = 10_000;

export interface MemberDirectory {
  /** The participant's membership of the workspace, or null when they are not a member. */
  find(workspaceId: string, participantId: string): Promise<Membership | null>;
  /** Forget a cached membership at once (the hub announced a role change or a removal). */
  forget(workspaceId: string, participantId: string): void;
}

/** Workspace memberships from the hub's internal API, cached for 10 s (non-members too). */
export function createMemberDirectory(options: {
  hub: HubInternalClient;
  now?: () => number;
}): MemberDirectory {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { member: Membership | null; expiresAt: number }>();
  const unavailable = (cause?: unknown) =>
    new AppError({
      status: 503,
      code: 'hub_unavailable',
      detail: 'The workspace registry is unreachable; try again shortly.',
      cause,
    });
  return {
    async find(workspaceId, participantId) {
      const key = `${workspaceId}\u0000${participantId}`;
      const hit = cache.get(key);
      if (hit && hit.expiresAt > now()) return hit.member;
      let result;
      try {
        result = await options.hub.GET('/internal/v1/workspaces/{workspaceId}/members/{participantId}', {
          params: { path: { workspaceId, participantId } },
          signal: AbortSignal.timeout(5_000),
        });
      } catch (error) {
        throw unavailable(error);
      }
      let member: Membership | null;
      if (result.response.status === 404 || result.response.status === 400) member = null;
      else if (result.data) member = { role: result.data.data.role };
      else throw unavailable();
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { member, expiresAt: now() + MEMBER_CACHE_MS });
      return member;
    },
    forget(workspaceId, participantId) {
      cache.delete(`${workspaceId}\u0000${participantId}`);
    },
  };
}
