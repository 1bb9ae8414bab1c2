import { firstUnfinishedStageKey } from '../../data/engine-pass.writer';
import { endInvocation } from '../../data/invocation.ending';
import { failureOf, isFailable } from '../../domain/invocation-ending';
import type { ReconcileContext } from './reconcile-context';

/** A launched run past the template's deadline ends `failed` (`run_deadline_exceeded`); true when it did. */
export async function failPastDeadline(ctx: ReconcileContext): Promise<boolean> {
  const { invocation } = ctx;
  if (!invocation.deadlineAt || invocation.deadlineAt.getTime() > ctx.now.getTime()) return false;
  if (!isFailable(invocation.state)) return false;
  const stageKey = await firstUnfinishedStageKey(ctx.tx, invocation.id);
  const launchedAt = invocation.launchedAt ?? invocation.createdAt;
  const ended = await endInvocation(
    ctx.deps,
    ctx.tx,
    invocation,
    {
      state: 'failed',
      failure: failureOf('run_deadline_exceeded', ctx.now, {
        stageKey,
        deadlineSeconds: Math.round((invocation.deadlineAt.getTime() - launchedAt.getTime()) / 1000),
      }),
    },
    { kind: 'service', service: 'workflow-engine' },
    ctx.now,
  );
  ctx.invocation = ended.invocation;
  ctx.deliveryJobs.push(...ended.deliveryJobs);
  ctx.closesHandoffs = true;
  return true;
}
