import type { HubInternalClient } from '@svc/contracts';
import { AppError } from '@svc/service-kit';

export interface ProjectRef {
  id: string;
  code: string;
  name: string;
  workspace: { id: string; slug: string };
  /** When the project was archived (null or absent while active): no new invocations then. */
  archivedAt?: string | null;
}

/**
 * How long a project's record is reused. A project never moves between workspaces; its archived mark can
 * change: the hub announces an archive or unarchive (`project_changed`) and every replica forgets the project at
 * once; a lost notice takes effect within this time.
 */
export const PROJECT_CACHE_MS = 10_000;
/**
 * For this long after its expiry a cached project is still answered at once while one refresh asks the hub:
 * a slow or restarting hub then delays the refresh, not every request of the project (each would otherwise
 * wait on the same look-up and fail together with `hub_unavailable`). A notice still forgets it at once.
 */
export const PROJECT_STALE_MS = 60_000;

export interface ProjectDirectory {
  /** The project, or null when the hub does not know it. */
  find(projectId: string): Promise<ProjectRef | null>;
  /** Forget a cached project at once (the hub announced it was archived or brought back). */
  forget(projectId: string): void;
}

/**
 * Project identities from the hub's internal API, cached briefly and answered stale while one refresh runs
 * (unknown projects are not cached).
 */
export function createProjectDirectory(options: {
  hub: HubInternalClient;
  now?: () => number;
}): ProjectDirectory {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { project: ProjectRef; expiresAt: number }>();
  // One question to the hub per project at a time: requests that miss together share its answer.
  const asking = new Map<string, Promise<ProjectRef | null>>();
  // Bumped by every forget: an answer asked for before one is returned but not kept (it may be the old state).
  let generation = 0;
  const lookUp = async (projectId: string): Promise<ProjectRef | null> => {
    const askedAt = generation;
    let result;
    try {
      result = await options.hub.GET('/internal/v1/projects/{projectId}', {
        params: { path: { projectId } },
        signal: AbortSignal.timeout(5_000),
      });
    } catch (error) {
      throw new AppError({
        status: 503,
        code: 'hub_unavailable',
        detail: 'The project registry is unreachable; try again shortly.',
        cause: error,
      });
    }
    // A malformed id (the hub refuses it with 400 `validation_failed`) names no project either.
    const refused = result.response.status === 400 && result.error?.code === 'validation_failed';
    if (result.response.status === 404 || refused) return null;
    if (!result.data) {
      throw new AppError({
        status: 503,
        code: 'hub_unavailable',
        detail: 'The project registry is unreachable; try again shortly.',
        message: `project lookup answered HTTP ${result.response.status}`,
      });
    }
    const data = result.data.data;
    const project: ProjectRef = {
      id: data.id,
      code: data.code,
      name: data.name,
      workspace: data.workspace,
      archivedAt: data.archived_at ?? null,
    };
    if (askedAt === generation) cache.set(projectId, { project, expiresAt: now() + PROJECT_CACHE_MS });
    return project;
  };
  const ask = (projectId: string): Promise<ProjectRef | null> => {
    let pending = asking.get(projectId);
    if (!pending) {
      pending = lookUp(projectId).finally(() => asking.delete(projectId));
      asking.set(projectId, pending);
    }
    return pending;
  };
  return {
    find(projectId) {
      const hit = cache.get(projectId);
      const at = now();
      if (hit && hit.expiresAt > at) return Promise.resolve(hit.project);
      if (hit && hit.expiresAt + PROJECT_STALE_MS > at) {
        // Refreshed in the background; its failure leaves the entry as it is until the stale time is over.
        ask(projectId).catch(() => undefined);
        return Promise.resolve(hit.project);
      }
      return ask(projectId);
    },
    forget(projectId) {
      generation += 1;
      cache.delete(projectId);
      asking.delete(projectId);
    },
  };
}
