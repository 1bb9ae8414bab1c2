import type { AgentActor } from '@svc/auth';
import { dispatchOutbox, writeOutbox } from '../../data/outbox.writer';
import {
  assertOpen,
  clearStageAttention,
  recordStage,
  redactText,
  withOwnedStage,
} from '../../data/run-stage.ownership';
import type { ReconcileJob } from '../../data/reconcile.queue';
import { loadStageAssignment } from '../../data/stage-assignments.lookups';
import { storeEvidenceBatch } from '../../data/stage-evidence.writer';
import type { EvidenceItem } from '../../data/stage-evidence.writer';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';
import { isTerminal } from '../../domain/invocation-states';

/** What the owner completes a stage with: a summary, and evidence stored in the same transaction. */
export interface StageCompletion {
  summary?: string;
  evidence?: readonly EvidenceItem[];
}

/**
 * Completes the stage (idempotent: a repeated completion stores no evidence again) and queues the reconcile that
 * moves the run on (none for an invocation that has already ended).
 */
export async function completeStage(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  completion: StageCompletion = {},
): Promise<StageAssignmentRecord> {
  const { summary, evidence } = completion;
  const jobs: ReconcileJob[] = [];
  const { stage, invocation } = await withOwnedStage(deps, actor, stageId, async (locked) => {
    if (locked.stage.state === 'completed') return locked;
    assertOpen(locked.stage);
    const now = deps.now();
    await storeEvidenceBatch(locked.tx, stageId, actor.agentId, evidence, now);
    const done = await locked.tx.runStage.update({
      where: { id: stageId },
      data: {
        state: 'completed',
        completedAt: now,
        lastHeartbeatAt: now,
        blockerReason: null,
        ...(summary !== undefined ? { summary: redactText(summary) } : {}),
      },
    });
    await clearStageAttention(locked);
    // An ended invocation (its artifact was published before its last stage completed) has no run to move on:
    // its reconcile would change nothing, so none is queued.
    if (!isTerminal(locked.invocation.state)) {
      jobs.push(await writeOutbox(locked.tx, locked.invocation.id, 'stage_completed'));
    }
    await recordStage(deps, locked, actor, 'stage.completed', {
      duration_ms: done.firstAssignedAt ? now.getTime() - done.firstAssignedAt.getTime() : null,
    });
    return { stage: done, invocation: locked.invocation };
  });
  await deps.queue.announceInvocationChanges([stage.invocationId]);
  await dispatchOutbox(deps.db, deps.queue, jobs);
  return loadStageAssignment(deps.db, stage, invocation);
}
