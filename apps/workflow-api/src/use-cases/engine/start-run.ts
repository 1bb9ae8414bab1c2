import { newId } from '@svc/service-kit';
import { runExists as runExistsFor } from '../../data/engine-pass.writer';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { insertRunWithStages } from '../../data/run-start.writer';
import { withEffect } from '../../domain/blockers';
import type { Blocker } from '../../domain/blockers';
import type { RunStage } from '../../generated/prisma/client';
import { auditEngineEvent, updateInvocation } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';
import { runLimitBlocking } from './admit-run';
import { runStageRows, unstartedRunStages } from './run-stages';

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

/** Whether the invocation's run exists (asked only on the paths that would otherwise hold the run back). */
async function runExists(ctx: ReconcileContext): Promise<boolean> {
  return runExistsFor(ctx.tx, ctx.invocation.id);
}

/**
 * What {@link startRun} did: the stages of the run it created (as stored), `existing` when the invocation's run
 * was there already, or null when the run did not start (the invocation is blocked or queued).
 */
export type StartedRun = RunStage[] | 'existing' | null;

/**
 * Creates the run and its stages from the pinned template (once: the run is unique per invocation, and an insert
 * that meets the invocation's run leaves it as it is), with the ids the pass planned with when it has them, and
 * sets the invocation `running` (one statement). The pinned template gone (the invocation is then `blocked`) or a run limit
 * reached (it waits queued) hold back only an invocation without a run.
 */
export async function startRun(ctx: ReconcileContext): Promise<StartedRun> {
  const template = await loadInvocationTemplate(ctx.tx, ctx.invocation);
  if (!template) {
    if (await runExists(ctx)) return 'existing';
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
    return null;
  }
  const limited = await runLimitBlocking(ctx.tx, ctx.invocation, ctx.limits);
  if (limited) {
    if (await runExists(ctx)) return 'existing';
    await queueForRunSlot(ctx, limited);
    return null;
  }
  const stageCount = template.definition.stages.length;
  // The ids the hub was asked about before the transaction, when the pass planned for this run.
  const planned = ctx.plan?.run;
  const ids =
    planned && planned.stageIds.length === stageCount
      ? planned
      : { runId: newId('run'), stageIds: template.definition.stages.map(() => newId('stg')) };
  const runId = ids.runId;
  // The run, its stages and the invocation `running` in one statement, which leaves an existing run (and its
  // stages) as they are. A queued launch got its slot: the limit's blocker goes with the queue.
  const running = await insertRunWithStages(ctx.tx, {
    runId,
    invocationId: ctx.invocation.id,
    workspaceId: ctx.invocation.workspaceId,
    projectId: ctx.invocation.projectId,
    startedAt: ctx.now,
    stages: runStageRows(ctx.invocation, ids, template),
    wasQueued: ctx.invocation.queuedAt !== null,
  });
  if (!running) return 'existing';
  ctx.invocation = running;
  await auditEngineEvent(ctx, 'run.started', {
    run_id: runId,
    stages: template.definition.stages.map((s) => s.key),
  });
  // The stages as just stored, so the pass goes on without reading them back.
  return unstartedRunStages(ctx.invocation, ids, template);
}
