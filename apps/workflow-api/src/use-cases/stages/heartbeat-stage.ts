import type { AgentActor } from '@svc/auth';
import { assertOpen, ownershipError, redactText } from '../../data/run-stage.ownership';
import { loadStageAssignment } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';
import { OPEN_STAGE_STATES } from '../../domain/invocation-states';

/** Liveness of the owner (no lock: one conditional update); a progress note is redacted and kept. */
export async function heartbeatStage(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  progress?: string,
): Promise<StageAssignmentRecord> {
  const now = deps.now();
  const updated = await deps.db.runStage.updateMany({
    where: {
      id: stageId,
      workspaceId: actor.workspaceId,
      ownerAgentId: actor.agentId,
      state: { in: [...OPEN_STAGE_STATES] },
    },
    data: { lastHeartbeatAt: now, ...(progress !== undefined ? { progress: redactText(progress) } : {}) },
  });
  const stage = await deps.db.runStage.findUnique({ where: { id: stageId } });
  const error = ownershipError(stage, actor, stageId);
  if (error) throw error;
  if (updated.count === 0) assertOpen(stage!);
  return loadStageAssignment(deps.db, stage!);
}
