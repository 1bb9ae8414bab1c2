import type { AgentActor } from '@svc/auth';
import { assertOpen, recordStage, redactText, withOwnedStage } from '../../data/run-stage.ownership';
import { loadStageAssignment } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';

/** The owner cannot go on: the stage is `blocked` and the invocation's attention says why. */
export async function reportStageBlocker(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  reason: string,
): Promise<StageAssignmentRecord> {
  const stage = await withOwnedStage(deps, actor, stageId, async (locked) => {
    assertOpen(locked.stage);
    const clean = redactText(reason);
    const stage = await locked.tx.runStage.update({
      where: { id: stageId },
      data: { state: 'blocked', blockerReason: clean, lastHeartbeatAt: deps.now() },
    });
    if (locked.invocation.state === 'running' && locked.invocation.attention !== 'artifact_rejected') {
      await locked.tx.invocation.update({
        where: { id: locked.invocation.id },
        data: { attention: 'blocked', attentionReason: `Stage '${stage.key}': ${clean}` },
      });
    }
    await recordStage(deps, locked, actor, 'stage.blocked', { reason: clean });
    return stage;
  });
  await deps.queue.announceInvocationChanges([stage.invocationId]);
  return loadStageAssignment(deps.db, stage);
}
