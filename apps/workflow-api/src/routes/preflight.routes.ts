import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { preflightIntent } from '../use-cases/resolve/preflight-intent';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

export function preflightHandlers(deps: WorkflowDeps): WorkflowHandlers<'preflightIntent'> {
  return {
    async preflightIntent(ctx) {
      const project = projectOf(ctx);
      const result = await preflightIntent(deps, project.id, ctx.body, {
        actor: actorOf(ctx.actor),
        project,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: result } };
    },
  };
}
