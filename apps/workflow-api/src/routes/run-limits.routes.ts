import type { ParticipantActor } from '@svc/auth';
import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { presentRunLimits } from '../presenters/run-limits';
import { getRunLimits } from '../use-cases/run-limits/get-run-limits';
import { updateRunLimits } from '../use-cases/run-limits/update-run-limits';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

export function runLimitHandlers(deps: WorkflowDeps): WorkflowHandlers<'getRunLimits' | 'updateRunLimits'> {
  return {
    async getRunLimits(ctx) {
      const project = projectOf(ctx);
      return { status: 200, body: { data: presentRunLimits(project, await getRunLimits(deps, project)) } };
    },
    async updateRunLimits(ctx) {
      const project = projectOf(ctx);
      const view = await updateRunLimits(
        deps,
        actorOf(ctx.actor) as ParticipantActor,
        project,
        ctx.body,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentRunLimits(project, view) } };
    },
  };
}
