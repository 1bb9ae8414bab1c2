import { newId } from '@svc/service-kit';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { withEffect } from '../../domain/blockers';
import type { Blocker } from '../../domain/blockers';
import { auditEngineEvent, updateInvocation } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';
import { runLimitBlocking } from './admit-run';
import { runStageRows } from './run-stages';

/**
 * A run limit is reached: the invocation stays `launching`, queued (`queued_at`, kept from the first time), with
 * the limit's blocker; the sweeper starts it when a slot frees (see `wakeQueuedLaunches`). Written only when
 * something changes, so a recheck of a queued invocation writes nothing.
 */
async function queueForRunSlot(ctx: ReconcileContext, blocker: Blocker): Promise<void> {
  const stored = Array.isArray(ctx.invocation.blockers) ? (ctx.invocation.blockers as Blocker[]) : [];
  if (ctx.invocation.queuedAt !== null && stored.length === 1 && stored[0]?.code === blocker.code) return;
  const first = ctx.invocation.queuedAt === null;
  await updateInvocation(ctx, {
    queuedAt: ctx.invocation.queuedAt ?? ctx.now,
    attention: 'blocked',
    attentionReason: blocker.message,
    blockers: [blocker],
  });
  if (first) await auditEngineEvent(ctx, 'run.queued', { code: blocker.code });
}

/**
 * Creates the run and its stages from the pinned template (once: the run is unique per invocation), with the ids
 * the pass planned with when it has them, and sets the invocation `running`. Returns false when the pinned
 * template is gone (the invocation is then `blocked`) or a run limit is reached (it waits queued).
 */
export async function startRun(ctx: ReconcileContext): Promise<boolean> {
  const existing = await ctx.tx.workflowRun.findUnique({ where: { invocationId: ctx.invocation.id } });
  if (existing) return true;
  const template = await loadInvocationTemplate(ctx.tx, ctx.invocation);
  if (!template) {
    await updateInvocation(ctx, {
      state: 'blocked',
      attention: 'blocked',
      attentionReason: 'The pinned template no longer exists.',
      blockers: [
        withEffect({
          category: 'classifier_template_configuration',
          code: 'template_not_found',
          message: 'The template this invocation pinned could not be found.',
          recommended_action: 'Invoke again with a contract whose template exists.',
        }),
      ],
    });
    return false;
  }
  const limited = await runLimitBlocking(ctx.tx, ctx.invocation);
  if (limited) {
    await queueForRunSlot(ctx, limited);
    return false;
  }
  const stageCount = template.definition.stages.length;
  // The ids the hub was asked about before the transaction, when the pass planned for this run.
  const planned = ctx.plan?.run;
  const ids =
    planned && planned.stageIds.length === stageCount
      ? planned
      : { runId: newId('run'), stageIds: template.definition.stages.map(() => newId('stg')) };
  const runId = ids.runId;
  await ctx.tx.workflowRun.create({
    data: {
      id: runId,
      invocationId: ctx.invocation.id,
      workspaceId: ctx.invocation.workspaceId,
      projectId: ctx.invocation.projectId,
      startedAt: ctx.now,
    },
  });
  await ctx.tx.runStage.createMany({ data: runStageRows(ctx.invocation, ids, template) });
  const wasQueued = ctx.invocation.queuedAt !== null;
  await updateInvocation(ctx, {
    state: 'running',
    launchedAt: ctx.invocation.launchedAt ?? ctx.now,
    // A queued launch got its slot: the limit's blocker goes with the queue.
    ...(wasQueued ? { queuedAt: null, attention: 'none', attentionReason: null, blockers: [] } : {}),
  });
  await auditEngineEvent(ctx, 'run.started', {
    run_id: runId,
    stages: template.definition.stages.map((s) => s.key),
  });
  return true;
}
