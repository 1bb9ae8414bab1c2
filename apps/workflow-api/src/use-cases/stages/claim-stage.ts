import type { AgentActor } from '@svc/auth';
import { claimOwnedStage } from '../../data/stage-claim.writer';
import { loadStageAssignment } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';

/** `assigned` → `claimed` (a blocked stage resumes); repeating it is harmless. Counts as a heartbeat. */
export async function claimStage(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
): Promise<StageAssignmentRecord> {
  const { stage, invocation } = await claimOwnedStage(deps, actor, stageId);
  return loadStageAssignment(deps.db, stage, invocation);
}
