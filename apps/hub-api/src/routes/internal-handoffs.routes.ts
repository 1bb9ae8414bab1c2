import type { HubDeps } from '../deps';
import { presentStageHandoff } from '../presenters/handoffs';
import { cancelHandoff } from '../use-cases/handoffs/cancel-handoff';
import { createStageHandoff } from '../use-cases/internal/create-stage-handoff';
import type { HubInternalHandlers } from './types';
import { actorOf } from './types';

/** Stage handoffs the workflow engine creates for stage owners and cancels when their stage ends without them. */
export function internalHandoffHandlers(
  deps: HubDeps,
): Pick<HubInternalHandlers, 'createStageHandoff' | 'cancelStageHandoff'> {
  return {
    async createStageHandoff(ctx) {
      const { body } = ctx;
      const { handoff, created } = await createStageHandoff(deps, actorOf(ctx.actor), {
        workspaceId: body.workspace_id,
        projectId: body.project_id,
        assigneeAgentId: body.assignee_agent_id,
        title: body.title,
        description: body.description,
        reference: body.reference,
        requestId: ctx.requestId,
      });
      const data = presentStageHandoff(handoff);
      return created ? { status: 201, body: { data } } : { status: 200, body: { data } };
    },
    async cancelStageHandoff(ctx) {
      const handoff = await cancelHandoff(deps, actorOf(ctx.actor), ctx.params.handoffId, {
        requestId: ctx.requestId,
        reason: ctx.body?.reason,
        idempotent: true,
      });
      return { status: 200, body: { data: presentStageHandoff(handoff) } };
    },
  };
}
