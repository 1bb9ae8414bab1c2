import type { AgentActor } from '@svc/auth';
import { assertOpen, ownershipError, redactText } from '../../data/run-stage.ownership';
import { writeStageHeartbeat } from '../../data/stage-heartbeat.writer';
import { loadStageAssignment } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';

/** Liveness of the owner (no lock: one conditional update that answers the row); a progress note is redacted and kept. */
export async function heartbeatStage(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  progress?: string,
): Promise<StageAssignmentRecord> {
  // One statement when the caller owns the open stage: the update answers the row it changed and its invocation.
  const updated = await writeStageHeartbeat(deps.pool, {
    stageId,
    workspaceId: actor.workspaceId,
    agentId: actor.agentId,
    at: deps.now(),
    ...(progress !== undefined ? { progress: redactText(progress) } : {}),
  });
  if (updated) return loadStageAssignment(deps.db, updated.stage, updated.invocation ?? undefined);
  // Nothing changed: say why (not found, not the caller's, reassigned, no longer open).
  const stage = await deps.db.runStage.findUnique({ where: { id: stageId } });
  const error = ownershipError(stage, actor, stageId);
  if (error) throw error;
  assertOpen(stage!);
  return loadStageAssignment(deps.db, stage!);
}
