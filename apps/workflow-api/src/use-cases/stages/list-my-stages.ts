import type { AgentActor } from '@svc/auth';
import type { AssignmentWaiter } from '../../data/assignment.waiter';
import { loadStageAssignments, readOpenStages } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';

/** Named here for the route that passes the waiter in (routes do not import `data/`). */
export type { AssignmentWaiter };

/** The caller's open stages with their invocations, oldest assignment first (at most 100), in one statement. */
function openStagesOf(deps: WorkflowDeps, actor: AgentActor) {
  return readOpenStages(deps.pool, actor.agentId, actor.workspaceId);
}

/**
 * Long-poll: the open stages now, or — when there are none and `waitSeconds` > 0 — after the next assignment
 * announced for this agent, or after the wait (an announcement lost with Redis only costs latency).
 */
export async function listMyStages(
  deps: WorkflowDeps,
  waiter: AssignmentWaiter,
  actor: AgentActor,
  waitSeconds: number,
  signal?: AbortSignal,
): Promise<StageAssignmentRecord[]> {
  // Watching before the first read: an assignment committed after it wakes the wait below.
  const watch = waitSeconds > 0 ? waiter.watch(actor.agentId) : undefined;
  try {
    let open = await openStagesOf(deps, actor);
    if (open.stages.length === 0 && watch) {
      await watch.wait(waitSeconds * 1000, signal);
      if (signal?.aborted) return [];
      open = await openStagesOf(deps, actor);
    }
    // The invocations were read with the stages: only the templates and schemas are looked up (cached).
    return await loadStageAssignments(deps.db, open.stages, open.invocations);
  } finally {
    watch?.stop();
  }
}
