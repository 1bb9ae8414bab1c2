import type { ParticipantActor } from '@svc/auth';
import { projectOf } from '../auth/access-guard';
import type { MemberDirectory } from '../auth/member-directory';
import type { WorkflowDeps } from '../deps';
import { presentAssistBudget, presentAssistCall, presentAssistSettings } from '../presenters/assist';
import { getAssistanceBudget } from '../use-cases/assist/get-assistance-budget';
import { getAssistanceSettings } from '../use-cases/assist/get-assistance-settings';
import { listAssistanceCalls } from '../use-cases/assist/list-assistance-calls';
import { updateAssistanceSettings } from '../use-cases/assist/update-assistance-settings';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

export function assistHandlers(
  deps: WorkflowDeps,
  members: MemberDirectory,
): WorkflowHandlers<
  'getAssistanceSettings' | 'updateAssistanceSettings' | 'getAssistanceBudget' | 'listAssistanceCalls'
> {
  return {
    async getAssistanceSettings(ctx) {
      const settings = await getAssistanceSettings(deps, projectOf(ctx).id);
      return { status: 200, body: { data: presentAssistSettings(settings) } };
    },
    async updateAssistanceSettings(ctx) {
      const settings = await updateAssistanceSettings(
        deps,
        members,
        actorOf(ctx.actor) as ParticipantActor,
        projectOf(ctx),
        ctx.body,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentAssistSettings(settings) } };
    },
    async getAssistanceBudget(ctx) {
      const project = projectOf(ctx);
      const budget = await getAssistanceBudget(deps, project.id);
      return { status: 200, body: { data: presentAssistBudget(project.id, budget) } };
    },
    async listAssistanceCalls(ctx) {
      const calls = await listAssistanceCalls(deps, projectOf(ctx).id, ctx.query.limit ?? 50);
      return { status: 200, body: { data: calls.map(presentAssistCall) } };
    },
  };
}
