import type { ProjectRef } from '../../auth/project-directory';
import { countQueuedInvocations, countRunsInProgress, loadRunLimits } from '../../data/run-limits.lookups';
import type { WorkflowDeps } from '../../deps';
import type { RunLimits, RunsInProgress } from '../../domain/run-limits';
import { sqlOn } from '../../db';

export interface RunLimitsView {
  limits: RunLimits;
  inProgress: RunsInProgress;
  queued: number;
}

/** The project's and its workspace's run limits, the runs in progress in each, and the project's queued launches. */
export async function getRunLimits(deps: WorkflowDeps, project: ProjectRef): Promise<RunLimitsView> {
  const [limits, inProgress, queued] = await Promise.all([
    loadRunLimits(sqlOn(deps.pool), project.id, project.workspace.id),
    countRunsInProgress(sqlOn(deps.pool), project.id, project.workspace.id),
    countQueuedInvocations(deps.db, project.id),
  ]);
  return { limits, inProgress, queued };
}
