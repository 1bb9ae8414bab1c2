import type { OperationGuard } from '@svc/service-kit';
import type { WorkflowDeps } from '../deps';
import { ownershipError } from '../data/run-stage.ownership';

/**
 * Stage actions that take a body (`/agents/me/workflow-stages/{stageId}/…`): the stage must be the calling
 * agent's before the body is validated (decision 4), so another workspace's agent gets 404
 * `stage_not_found` and another agent of the workspace 403 `stage_not_owned`, whatever it sent. The action
 * checks ownership again under the invocation's lock.
 */
export function stageGuard(deps: WorkflowDeps): OperationGuard {
  return async (ctx) => {
    const { operation, actor } = ctx;
    if (!operation.pathParams.includes('stageId') || !operation.hasJsonBody || actor?.kind !== 'agent')
      return;
    const stageId = String((ctx.params as Record<string, unknown>).stageId);
    const stage = await deps.db.runStage.findUnique({ where: { id: stageId } });
    const refused = ownershipError(stage, actor, stageId);
    if (refused) throw refused;
  };
}
