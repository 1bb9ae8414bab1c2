import { recordDeliveryEvent } from '../../data/delivery.events';
import { endRunRow } from '../../data/engine-pass.writer';
import { auditEngineEvent, updateInvocation } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';

/**
 * Every stage is done: the run ends and the invocation waits for its artifact (`waiting_for_artifact`, with its
 * delivery event), once. An `artifact_rejected` attention is kept (`keepRejected`): the next artifact must
 * still fix it.
 */
export async function endRun(ctx: ReconcileContext, keepRejected: boolean): Promise<void> {
  if (ctx.invocation.state === 'waiting_for_artifact') return;
  await endRunRow(ctx.tx, ctx.invocation.id, ctx.now);
  await updateInvocation(ctx, {
    state: 'waiting_for_artifact',
    ...(keepRejected ? {} : { attention: 'none', attentionReason: null }),
    blockers: [],
  });
  await auditEngineEvent(ctx, 'run.ended_without_artifact', {});
  ctx.deliveryJobs.push(
    ...(await recordDeliveryEvent(ctx.tx, ctx.invocation, 'invocation.waiting_for_artifact', null, ctx.now)),
  );
}
