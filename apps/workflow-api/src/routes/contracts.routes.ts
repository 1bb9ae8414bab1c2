import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { presentContract } from '../presenters/contracts';
import { createWorkflowContract } from '../use-cases/contracts/create-workflow-contract';
import { getWorkflowContract } from '../use-cases/contracts/get-workflow-contract';
import { listWorkflowContracts } from '../use-cases/contracts/list-workflow-contracts';
import { updateWorkflowContract } from '../use-cases/contracts/update-workflow-contract';
import { resolveIntent } from '../use-cases/resolve/resolve-intent';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

export function contractHandlers(
  deps: WorkflowDeps,
): WorkflowHandlers<
  | 'listWorkflowContracts'
  | 'createWorkflowContract'
  | 'getWorkflowContract'
  | 'updateWorkflowContract'
  | 'resolveWorkflowIntent'
> {
  return {
    async listWorkflowContracts(ctx) {
      const page = await listWorkflowContracts(deps, projectOf(ctx).id, {
        includeInactive: ctx.query.include_inactive,
        limit: ctx.query.limit,
        cursor: ctx.query.cursor,
      });
      return {
        status: 200,
        body: { data: page.items.map(presentContract), next_cursor: page.nextCursor },
      };
    },
    async createWorkflowContract(ctx) {
      const contract = await createWorkflowContract(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.body,
        ctx.requestId,
      );
      return { status: 201, body: { data: presentContract(contract) } };
    },
    async getWorkflowContract(ctx) {
      const contract = await getWorkflowContract(deps, projectOf(ctx).id, ctx.params.contractId);
      return { status: 200, body: { data: presentContract(contract) } };
    },
    async updateWorkflowContract(ctx) {
      const contract = await updateWorkflowContract(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.contractId,
        ctx.body,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentContract(contract) } };
    },
    async resolveWorkflowIntent(ctx) {
      const project = projectOf(ctx);
      const result = await resolveIntent(deps, project.id, ctx.body, {
        actor: actorOf(ctx.actor),
        project,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: result } };
    },
  };
}
