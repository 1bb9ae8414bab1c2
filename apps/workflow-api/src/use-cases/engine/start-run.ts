import { newId } from '@svc/service-kit';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { withEffect } from '../../domain/blockers';
import { auditEngineEvent, updateInvocation } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';
import { runStageRows } from './run-stages';

/**
 * Creates the run and its stages from the pinned template (once: the run is unique per invocation), with the ids
 * the pass planned with when it has them, and sets the invocation `running`. Returns false when the pinned
 * template is gone: the invocation is then `blocked`.
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
  await updateInvocation(ctx, { state: 'running', launchedAt: ctx.invocation.launchedAt ?? ctx.now });
  await auditEngineEvent(ctx, 'run.started', {
    run_id: runId,
    stages: template.definition.stages.map((s) => s.key),
  });
  return true;
}
