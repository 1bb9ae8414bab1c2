import { recordHandoffClosures } from '../../data/handoff-closures';
import type { RunStage } from '../../generated/prisma/client';
import { auditEngineEvent } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';

/**
 * Takes the current stage from an owner that stopped heartbeating: the stage is `pending` again, the owner
 * (`owner`) joins its stalled agents (not offered the stage again), and its hub handoff is recorded to be closed after
 * the commit. Returns false when a heartbeat arrived meanwhile (the owner keeps the stage). On success `stage`
 * is updated in place for the assignment that follows.
 */
export async function releaseStalledOwner(
  ctx: ReconcileContext,
  stage: RunStage,
  stalled: { owner: string; stalledIds: string[]; silentSince: Date },
): Promise<boolean> {
  const { owner, stalledIds, silentSince } = stalled;
  const released = await ctx.tx.runStage.updateMany({
    where: {
      id: stage.id,
      ownerAgentId: stage.ownerAgentId,
      lastHeartbeatAt: stage.lastHeartbeatAt,
    },
    data: {
      state: 'pending',
      ownerAgentId: null,
      handoffId: null,
      stalledAgentIds: [...stalledIds, owner],
    },
  });
  if (released.count === 0) return false;
  if ((await recordHandoffClosures(ctx.tx, [stage], 'stage_released')) > 0) ctx.closesHandoffs = true;
  await auditEngineEvent(
    ctx,
    'stage.stalled',
    {
      stage_key: stage.key,
      agent_id: stage.ownerAgentId,
      silent_ms: ctx.now.getTime() - silentSince.getTime(),
    },
    stage.id,
  );
  stage.ownerAgentId = null;
  stage.state = 'pending';
  stage.handoffId = null;
  return true;
}
