import type { HubInternalApi, HubInternalClient } from '@svc/contracts';
import { CoalescedReads } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';

type Schemas = HubInternalApi.components['schemas'];
export type RosterAgent = Schemas['RosterAgent'];
export type RuntimeReadiness = Schemas['RosterRuntimeReadiness'];

const HUB_TIMEOUT_MS = 5_000;

/**
 * The hub reads every launch and every reconcile makes: a project's roster and its runtime readiness. Reads of
 * the same thing asked at the same time share one call ({@link CoalescedReads}), and each answer was read after
 * its caller asked, so a burst of launches of one project asks the hub a few times instead of once per launch,
 * and nobody is answered from before a change it made.
 */
export interface HubReads {
  /** The project's roster (only agents holding every one of `capabilities`, when given); null when the hub could not answer. */
  roster(projectId: string, capabilities?: readonly string[]): Promise<RosterAgent[] | null>;
  /** The project's runtime readiness; null when the hub could not answer. */
  runtimeReadiness(projectId: string): Promise<RuntimeReadiness | null>;
}

export function createHubReads(hub: HubInternalClient, logger: Logger): HubReads {
  const rosters = new CoalescedReads<RosterAgent[] | null>();
  const readiness = new CoalescedReads<RuntimeReadiness | null>();
  const failed = (what: string, projectId: string) => (error: unknown) => {
    logger.warn({ err: error, project_id: projectId }, `${what} read failed`);
    return null;
  };
  return {
    roster(projectId, capabilities) {
      const capability = capabilities?.length ? [...new Set(capabilities)].sort() : undefined;
      const key = capability ? `${projectId} ${capability.join(',')}` : projectId;
      return rosters.read(key, () =>
        hub
          .GET('/internal/v1/projects/{projectId}/roster', {
            params: { path: { projectId }, ...(capability ? { query: { capability } } : {}) },
            signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
          })
          .then((res) => res.data?.data ?? null, failed('roster', projectId)),
      );
    },
    runtimeReadiness(projectId) {
      return readiness.read(projectId, () =>
        hub
          .GET('/internal/v1/projects/{projectId}/runtime-readiness', {
            params: { path: { projectId } },
            signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
          })
          .then((res) => res.data?.data ?? null, failed('runtime readiness', projectId)),
      );
    },
  };
}
