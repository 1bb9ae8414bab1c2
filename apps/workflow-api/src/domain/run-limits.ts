import { withEffect } from './blockers';
import type { Blocker } from './blockers';

/** Most runs in progress at once in a project and in its workspace (null: no limit). */
export interface RunLimits {
  project: number | null;
  workspace: number | null;
}

/** Runs in progress now, in the project and in its workspace. */
export interface RunsInProgress {
  project: number;
  workspace: number;
}

/** The invocation states in which a run is in progress. */
export const RUN_IN_PROGRESS_STATES = ['running'] as const;

/**
 * The limit a new run would go past, or null when it may start: the project's first, then the workspace's.
 */
export function reachedRunLimit(limits: RunLimits, inProgress: RunsInProgress): Blocker | null {
  if (limits.project !== null && inProgress.project >= limits.project) {
    return runLimitBlocker('project', limits.project, inProgress.project);
  }
  if (limits.workspace !== null && inProgress.workspace >= limits.workspace) {
    return runLimitBlocker('workspace', limits.workspace, inProgress.workspace);
  }
  return null;
}

/** The typed blocker of a reached run limit: the launch is accepted and the run waits, queued, for a slot. */
export function runLimitBlocker(scope: 'project' | 'workspace', limit: number, inProgress: number): Blocker {
  return withEffect({
    category: 'infrastructure_health',
    code: `${scope}_run_limit_reached`,
    message:
      `The ${scope} has ${inProgress} run${inProgress === 1 ? '' : 's'} in progress, its limit of ${limit}: ` +
      'a launched invocation waits, queued, and its run starts when one of them ends.',
    recommended_action:
      `Wait for a run of the ${scope} to end, or raise the ${scope}'s run limit ` +
      '(PATCH …/workflow/run-limits, workspace owner or admin).',
  });
}
