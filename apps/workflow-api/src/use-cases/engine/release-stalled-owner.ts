import { releaseStage } from '../../data/engine-pass.writer';
import { recordHandoffClosures } from '../../data/handoff-closures';
import { withStall } from '../../domain/stage-owners';
import type { RunStage } from '../../generated/prisma/client';
import { auditEngineEvent } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';

/**
 * Takes the current stage from an owner that stopped heartbeating (`stalled`), or that the hub no longer counts
 * as running while its stage is silent (`lost`: its host stopped heartbeating, or it stopped): the stage is
 * `pending` again, the owner (`owner`) joins its stalled agents with the time (not offered the stage again until
 * it heartbeats at the hub after that time), and its hub handoff is recorded to be closed after the commit.
 * Returns false when a heartbeat arrived meanwhile (the owner keeps the stage): the update is conditional on the
 * heartbeat time read, so an owner's late heartbeat and the release never both win. On success `stage` is
 * updated in place for the assignment that follows.
 */
export async function releaseStalledOwner(
  ctx: ReconcileContext,
  stage: RunStage,
  stalled: {
    owner: string;
    stalledIds: string[];
    silentSince: Date;
    cause?: 'stalled' | 'lost';
    /** For `lost`: what the hub said of the owner (its status, or absent from the roster). */
    ownerStatus?: string;
  },
): Promise<boolean> {
  const { owner, stalledIds, silentSince, cause = 'stalled' } = stalled;
  const released = await releaseStage(ctx.tx, stage, {
    agentIds: [...stalledIds, owner],
    at: withStall(stage.stalledAt, owner, ctx.now),
  });
  if (!released) return false;
  if ((await recordHandoffClosures(ctx.tx, [stage], 'stage_released')) > 0) ctx.closesHandoffs = true;
  await auditEngineEvent(
    ctx,
    cause === 'lost' ? 'stage.owner_lost' : 'stage.stalled',
    {
      stage_key: stage.key,
      agent_id: stage.ownerAgentId,
      silent_ms: ctx.now.getTime() - silentSince.getTime(),
      ...(cause === 'lost' ? { owner_status: stalled.ownerStatus ?? 'absent' } : {}),
    },
    stage.id,
  );
  stage.ownerAgentId = null;
  stage.state = 'pending';
  stage.handoffId = null;
  stage.stalledAgentIds = [...stalledIds, owner];
  stage.stalledAt = withStall(stage.stalledAt, owner, ctx.now);
  return true;
}
