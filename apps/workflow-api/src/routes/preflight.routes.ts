import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { preflightIntent } from '../use-cases/resolve/preflight-intent';
import type { WorkflowHandlers } from './types';

export function preflightHandlers(deps: WorkflowDeps): WorkflowHandlers<'preflightIntent'> {
  return {
    async preflightIntent(ctx) {
      const result = await preflightIntent(deps, projectOf(ctx).id, ctx.body);
      return { status: 200, body: { data: result } };
    },
  };
}
