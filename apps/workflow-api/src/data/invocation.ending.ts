import type { Actor } from '@svc/auth';
import type { Tx } from '../db';
import type { WorkflowDeps } from '../deps';
import type { InvocationCancellation, InvocationFailure } from '../domain/invocation-ending';
import { OPEN_STAGE_STATES } from '../domain/invocation-states';
import type { Invocation } from '../generated/prisma/client';
import { recordDeliveryEvent } from './delivery.events';
import type { DeliveryJob } from './delivery.queue';
import { recordHandoffClosures } from './handoff-closures';

export type Ending =
  | { state: 'cancelled'; cancellation: InvocationCancellation }
  | { state: 'failed'; failure: InvocationFailure; failedStageId?: string };

/**
 * Ends an invocation as `cancelled` or `failed` inside the caller's transaction (the invocation row locked):
 * open stages are closed (`cancelled`, or `failed`), stages not reached are `skipped`, owners are released (a
 * closed stage is nobody's open stage any more), the run ends, the event is audited and its delivery recorded.
 * The hub handoffs of the closed stages are recorded to be cancelled at the hub: after the commit the caller
 * runs `closeInvocationHandoffs` (the sweeper retries what the hub did not confirm).
 * Returns the updated invocation and the delivery jobs to enqueue after the commit.
 */
export async function endInvocation(
  deps: WorkflowDeps,
  tx: Tx,
  invocation: Invocation,
  ending: Ending,
  actor: Actor,
  now: Date,
  requestId?: string,
): Promise<{ invocation: Invocation; deliveryJobs: DeliveryJob[] }> {
  const closed = ending.state === 'cancelled' ? 'cancelled' : 'failed';
  const closing = await tx.runStage.findMany({
    where: {
      invocationId: invocation.id,
      handoffId: { not: null },
      OR: [
        { state: { in: [...OPEN_STAGE_STATES] } },
        ...(ending.state === 'failed' && ending.failedStageId ? [{ id: ending.failedStageId }] : []),
      ],
    },
    select: { id: true, invocationId: true, handoffId: true },
  });
  await recordHandoffClosures(tx, closing, `invocation_${closed}`);
  if (ending.state === 'failed' && ending.failedStageId) {
    await tx.runStage.updateMany({
      where: { id: ending.failedStageId },
      data: { state: 'failed', completedAt: now },
    });
  }
  await tx.runStage.updateMany({
    where: { invocationId: invocation.id, state: { in: [...OPEN_STAGE_STATES] } },
    data: { state: closed, completedAt: now },
  });
  await tx.runStage.updateMany({
    where: { invocationId: invocation.id, state: 'pending' },
    data: { state: 'skipped' },
  });
  await tx.workflowRun.updateMany({
    where: { invocationId: invocation.id, endedAt: null },
    data: { state: ending.state === 'cancelled' ? 'cancelled' : 'ended', endedAt: now },
  });
  const updated = await tx.invocation.update({
    where: { id: invocation.id },
    data:
      ending.state === 'cancelled'
        ? {
            state: 'cancelled',
            completedAt: now,
            attention: 'none',
            attentionReason: null,
            blockers: [],
            cancellation: ending.cancellation as never,
          }
        : {
            state: 'failed',
            completedAt: now,
            attention: 'failed',
            attentionReason: ending.failure.message,
            blockers: [],
            failure: ending.failure as never,
          },
  });
  await deps.audit.record(
    {
      workspaceId: invocation.workspaceId,
      projectId: invocation.projectId,
      actor,
      action: `invocation.${ending.state}`,
      targetType: 'invocation',
      targetId: invocation.id,
      data:
        ending.state === 'cancelled'
          ? { from_state: invocation.state, reason: ending.cancellation.reason }
          : {
              from_state: invocation.state,
              reason: ending.failure.reason,
              stage_key: ending.failure.stage_key,
            },
      requestId,
    },
    tx,
  );
  const deliveryJobs = await recordDeliveryEvent(tx, updated, `invocation.${ending.state}`, null, now);
  return { invocation: updated, deliveryJobs };
}
