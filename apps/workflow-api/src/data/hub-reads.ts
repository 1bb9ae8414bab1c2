import type { HubInternalApi, HubInternalClient } from '@svc/contracts';
import { CoalescedReads } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';

type Schemas = HubInternalApi.components['schemas'];
export type RosterAgent = Schemas['RosterAgent'];
export type RuntimeReadiness = Schemas['RosterRuntimeReadiness'];

const HUB_TIMEOUT_MS = 5_000;

/** Rosters kept at most by one process (the oldest read goes first). */
export const ROSTER_MAX_ENTRIES = 2_000;

/**
 * The hub reads every launch and every reconcile makes: a project's roster and its runtime readiness. Reads of
 * the same thing asked at the same time share one call ({@link CoalescedReads}), and each answer of `roster`
 * and `runtimeReadiness` was read after its caller asked, so a burst of launches of one project asks the hub a
 * few times instead of once per launch, and nobody is answered from before a change it made.
 *
 * The reconcile takes `recentRoster` instead (decision 105): a roster read at most `rosterMaxAgeMs` ago, kept
 * in this process, dropped at once when the hub announces a change to a roster of the project's workspace
 * ({@link HubReads.forgetRosters}). Launch readiness takes the recent answers first and trusts them only when
 * they find nothing missing; anything missing is read again after the call (decision 106).
 */
export interface HubReads {
  /**
   * The project's roster (only agents holding every one of `capabilities`, when given), read after the call;
   * null when the hub could not answer.
   */
  roster(projectId: string, capabilities?: readonly string[]): Promise<RosterAgent[] | null>;
  /**
   * The same roster read at most `rosterMaxAgeMs` before the call, or since the last roster notice of the
   * project's workspace, whichever is later; null when the hub could not answer (a failure is not kept).
   */
  recentRoster(
    project: { id: string; workspaceId: string },
    capabilities?: readonly string[],
    read?: RecentRead,
  ): Promise<RosterAgent[] | null>;
  /**
   * Only what is kept (read at most `rosterMaxAgeMs` ago): the project's whole roster and its runtime readiness,
   * undefined when either is not kept. Asks the hub nothing.
   */
  kept(project: { id: string }): { roster: RosterAgent[]; readiness: RuntimeReadiness } | undefined;
  /** Drops every kept roster and readiness answer of the workspace's projects (the hub announced a change; decision 105). */
  forgetRosters(workspaceId: string): void;
  /** The project's runtime readiness; null when the hub could not answer. */
  runtimeReadiness(projectId: string): Promise<RuntimeReadiness | null>;
  /** The same readiness read at most `rosterMaxAgeMs` before the call (kept and dropped as rosters are). */
  recentRuntimeReadiness(
    project: { id: string; workspaceId: string },
    read?: RecentRead,
  ): Promise<RuntimeReadiness | null>;
}

/** `fresh`: read after the call, and keep that answer for the recent reads that follow. */
export interface RecentRead {
  fresh?: boolean;
}

export interface HubReadsOptions {
  /** How old a roster `recentRoster` may answer with (ms; 0 reads every time). */
  rosterMaxAgeMs?: number;
  /** How many rosters (and readiness answers) are kept at most (default {@link ROSTER_MAX_ENTRIES}). */
  rosterMaxEntries?: number;
  /** Milliseconds of a monotonic clock (default `performance.now`). */
  clock?: () => number;
}

interface Kept {
  workspaceId: string;
  /** When the read that answered it was asked (it started later): the age counts from here. */
  askedAt: number;
  answer: RosterAgent[] | RuntimeReadiness;
}

export function createHubReads(
  hub: HubInternalClient,
  logger: Logger,
  options: HubReadsOptions = {},
): HubReads {
  const maxAgeMs = options.rosterMaxAgeMs ?? 0;
  const maxEntries = options.rosterMaxEntries ?? ROSTER_MAX_ENTRIES;
  const clock = options.clock ?? (() => performance.now());
  const rosters = new CoalescedReads<RosterAgent[] | null>();
  const readiness = new CoalescedReads<RuntimeReadiness | null>();
  /** Kept answers by read key, oldest read first (a new read is moved to the end). */
  const kept = new Map<string, Kept>();
  /**
   * Counts roster notices: a read asked before one and answered after it may hold the old roster, so it is
   * not kept (its callers still get it: they asked before the change was announced).
   */
  let notices = 0;
  const failed = (what: string, projectId: string) => (error: unknown) => {
    logger.warn({ err: error, project_id: projectId }, `${what} read failed`);
    return null;
  };
  const readRoster = (projectId: string, capabilities: readonly string[] | undefined) => {
    const capability = capabilities?.length ? [...new Set(capabilities)].sort() : undefined;
    const key = capability ? `${projectId} ${capability.join(',')}` : projectId;
    const read = () =>
      rosters.read(key, () =>
        hub
          .GET('/internal/v1/projects/{projectId}/roster', {
            params: { path: { projectId }, ...(capability ? { query: { capability } } : {}) },
            signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
          })
          .then((res) => res.data?.data ?? null, failed('roster', projectId)),
      );
    return { key, read };
  };
  const readReadiness = (projectId: string) =>
    readiness.read(projectId, () =>
      hub
        .GET('/internal/v1/projects/{projectId}/runtime-readiness', {
          params: { path: { projectId } },
          signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
        })
        .then((res) => res.data?.data ?? null, failed('runtime readiness', projectId)),
    );
  const keptAnswer = (key: string) => {
    const entry = kept.get(key);
    return entry && clock() - entry.askedAt <= maxAgeMs ? entry.answer : undefined;
  };
  /**
   * The answer kept under `key` when read at most `maxAgeMs` ago (unless `fresh`); otherwise read, and kept
   * unless it failed or a notice came while it was read.
   */
  async function recent<T extends Kept['answer']>(
    key: string,
    workspaceId: string,
    read: () => Promise<T | null>,
    fresh = false,
  ): Promise<T | null> {
    if (maxAgeMs <= 0) return read();
    const askedAt = clock();
    const entry = kept.get(key);
    if (!fresh && entry && askedAt - entry.askedAt <= maxAgeMs) return entry.answer as T;
    if (entry) kept.delete(key);
    const before = notices;
    const answer = await read();
    if (answer !== null && notices === before) {
      kept.delete(key);
      kept.set(key, { workspaceId, askedAt, answer });
      if (kept.size > maxEntries) kept.delete(kept.keys().next().value as string);
    }
    return answer;
  }
  return {
    roster(projectId, capabilities) {
      return readRoster(projectId, capabilities).read();
    },
    recentRoster(project, capabilities, options) {
      const { key, read } = readRoster(project.id, capabilities);
      return recent(`roster ${key}`, project.workspaceId, read, options?.fresh);
    },
    kept(project) {
      if (maxAgeMs <= 0) return undefined;
      const roster = keptAnswer(`roster ${project.id}`) as RosterAgent[] | undefined;
      const readiness = keptAnswer(`readiness ${project.id}`) as RuntimeReadiness | undefined;
      return roster && readiness ? { roster, readiness } : undefined;
    },
    forgetRosters(workspaceId) {
      notices += 1;
      for (const [key, entry] of kept) if (entry.workspaceId === workspaceId) kept.delete(key);
    },
    runtimeReadiness(projectId) {
      return readReadiness(projectId);
    },
    recentRuntimeReadiness(project, options) {
      const read = () => readReadiness(project.id);
      return recent(`readiness ${project.id}`, project.workspaceId, read, options?.fresh);
    },
  };
}
