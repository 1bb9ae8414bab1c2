import type { HubDeps } from '../deps';
import { presentStageHandoff } from '../presenters/handoffs';
import { createStageHandoff } from '../use-cases/internal/create-stage-handoff';
import type { HubInternalHandlers } from './types';
import { actorOf } from './types';

/** Stage handoffs the workflow engine creates for stage owners. */
export function internalHandoffHandlers(deps: HubDeps): Pick<HubInternalHandlers, 'createStageHandoff'> {
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
  };
}
