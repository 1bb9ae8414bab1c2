import type { AgentActor } from '@svc/auth';
import type { AssignmentWaiter } from '../../data/assignment.waiter';
import { loadStageAssignments } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import { claimNextOwnedStages } from '../../data/stage-claim.writer';
import type { WorkflowDeps } from '../../deps';

/** The caller's next assigned stages claimed, each with the invocation as the claim committed it. */
async function claimNext(deps: WorkflowDeps, actor: AgentActor, max: number) {
  const claimed = await claimNextOwnedStages(deps, actor, max);
  return {
    stages: claimed.map((c) => c.stage),
    invocations: claimed.map((c) => c.invocation),
  };
}

/**
 * Claims up to `max` of the caller's assigned stages, oldest assignment first, each as `claimStage` claims it:
 * the assignment and the claim in one round trip. When none is assigned and `waitSeconds` > 0, tries once more
 * after the next assignment announced for this agent, or after the wait (an announcement lost with Redis only
 * costs latency); answers what it claimed, possibly nothing.
 */
export async function claimNextStages(
  deps: WorkflowDeps,
  waiter: AssignmentWaiter,
  actor: AgentActor,
  options: { waitSeconds: number; max: number },
  signal?: AbortSignal,
): Promise<StageAssignmentRecord[]> {
  // Watching before the first claim: an assignment committed after it wakes the wait below.
  const watch = options.waitSeconds > 0 ? waiter.watch(actor.agentId) : undefined;
  try {
    let claimed = await claimNext(deps, actor, options.max);
    if (claimed.stages.length === 0 && watch) {
      await watch.wait(options.waitSeconds * 1000, signal);
      // A caller gone while it waited claims nothing: its stages stay assigned for its next call.
      if (signal?.aborted) return [];
      claimed = await claimNext(deps, actor, options.max);
    }
    // The invocations were read with the stages: only the templates and schemas are looked up (cached).
    return await loadStageAssignments(deps.db, claimed.stages, claimed.invocations);
  } finally {
    watch?.stop();
  }
}
