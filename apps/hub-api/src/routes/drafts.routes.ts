import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentWorkflowDraft } from '../presenters/workflow-drafts';
import { createWorkflowDraft } from '../use-cases/workflow-drafts/create-workflow-draft';
import { listWorkflowDrafts } from '../use-cases/workflow-drafts/list-workflow-drafts';
import type { HubHandlers } from './types';
import { participantOf } from './types';

const DEFAULT_PAGE_SIZE = 50;

/** Governed workflow drafts. There is deliberately no operation that launches a draft. */
export function draftHandlers(deps: HubDeps): HubHandlers<'listWorkflowDrafts' | 'createWorkflowDraft'> {
  return {
    async listWorkflowDrafts(ctx) {
      const { query } = ctx;
      const drafts = await listWorkflowDrafts(deps, workspaceOf(ctx).id, {
        projectId: query.project_id,
        after: query.after,
        limit: query.limit ?? DEFAULT_PAGE_SIZE,
      });
      return { status: 200, body: { data: drafts.map(presentWorkflowDraft) } };
    },
    async createWorkflowDraft(ctx) {
      const draft = await createWorkflowDraft(deps, participantOf(ctx.actor), workspaceOf(ctx).id, {
        intent: ctx.body.intent,
        title: ctx.body.title,
        projectId: ctx.body.project_id,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentWorkflowDraft(draft) } };
    },
  };
}
