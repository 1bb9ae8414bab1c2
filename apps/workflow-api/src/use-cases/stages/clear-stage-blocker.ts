import type { AgentActor } from '@svc/auth';
import { claimOwnedStage } from '../../data/stage-claim.writer';
import { loadStageAssignment } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';

/** The blocker is gone: the stage is `claimed` again and the attention clears. */
export async function clearStageBlocker(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
): Promise<StageAssignmentRecord> {
  const { stage, invocation } = await claimOwnedStage(deps, actor, stageId);
  await deps.queue.announceInvocationChanges([stage.invocationId]);
  return loadStageAssignment(deps.db, stage, invocation);
}
