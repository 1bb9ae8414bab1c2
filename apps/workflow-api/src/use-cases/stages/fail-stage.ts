import type { AgentActor } from '@svc/auth';
import { dispatchDeliveries } from '../../data/delivery.events';
import type { DeliveryJob } from '../../data/delivery.queue';
import { recordHandoffClosures } from '../../data/handoff-closures';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { endInvocation } from '../../data/invocation.ending';
import { dispatchOutbox, writeOutbox } from '../../data/outbox.writer';
import type { ReconcileJob } from '../../data/reconcile.queue';
import { assertOpen, recordStage, redactText, withOwnedStage } from '../../data/run-stage.ownership';
import { loadStageAssignment } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';
import { failureOf, withinStageRetries } from '../../domain/invocation-ending';
import { withStall } from '../../domain/stage-owners';
import { closeInvocationHandoffs } from '../engine/close-stage-handoffs';
import { sqlOfPrisma } from '../../db';

/**
 * The owner reports its stage failed. Within the template's `stage_failure_retries` the stage is released
 * (`pending`, the reporter never chosen again for it) and the engine assigns it again; beyond them the stage is
 * `failed` and the invocation ends `failed` (`stage_failed`) with `invocation.failed` recorded for delivery. Either
 * way the stage's hub handoff is cancelled at the hub after the commit.
 */
export async function failStage(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  reason: string,
): Promise<StageAssignmentRecord> {
  const jobs: ReconcileJob[] = [];
  const deliveryJobs: DeliveryJob[] = [];
  const stage = await withOwnedStage(deps, actor, stageId, async (locked) => {
    assertOpen(locked.stage);
    const { tx, invocation } = locked;
    const clean = redactText(reason);
    const now = deps.now();
    const template = await loadInvocationTemplate(sqlOfPrisma(tx), invocation);
    const failures = locked.stage.failures + 1;
    const retry = withinStageRetries(failures, template?.definition.guardrails.stage_failure_retries);
    await recordStage(deps, locked, actor, 'stage.failed', { reason: clean, failures, retried: retry });
    if (retry) {
      await recordHandoffClosures(sqlOfPrisma(tx), [locked.stage], 'stage_released');
      const stalled = (locked.stage.stalledAgentIds as string[]) ?? [];
      const released = await tx.runStage.update({
        where: { id: stageId },
        data: {
          state: 'pending',
          ownerAgentId: null,
          handoffId: null,
          failures,
          failureReason: clean,
          blockerReason: null,
          stalledAgentIds: stalled.includes(actor.agentId) ? stalled : [...stalled, actor.agentId],
          stalledAt: withStall(locked.stage.stalledAt, actor.agentId, now),
        },
      });
      jobs.push(await writeOutbox(tx, invocation.id, 'stage_released'));
      return released;
    }
    await tx.runStage.update({ where: { id: stageId }, data: { failures, failureReason: clean } });
    const ended = await endInvocation(
      deps,
      sqlOfPrisma(tx),
      invocation,
      {
        state: 'failed',
        failure: failureOf('stage_failed', now, { stageKey: locked.stage.key, stageReason: clean }),
        failedStageId: stageId,
      },
      actor,
      now,
    );
    deliveryJobs.push(...ended.deliveryJobs);
    return tx.runStage.findUniqueOrThrow({ where: { id: stageId } });
  });
  await deps.queue.announceInvocationChanges([stage.invocationId]);
  await dispatchOutbox(deps.db, deps.queue, jobs);
  await dispatchDeliveries(deps.db, deps.deliveries, deliveryJobs);
  await closeInvocationHandoffs(deps, stage.invocationId);
  return loadStageAssignment(deps.db, stage);
}
