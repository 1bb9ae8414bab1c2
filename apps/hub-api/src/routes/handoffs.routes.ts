import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentHandoff, presentHandoffDetail, presentHandoffEvidence } from '../presenters/handoffs';
import { acceptHandoff } from '../use-cases/handoffs/accept-handoff';
import { blockHandoff } from '../use-cases/handoffs/block-handoff';
import { cancelHandoff } from '../use-cases/handoffs/cancel-handoff';
import { claimHandoff } from '../use-cases/handoffs/claim-handoff';
import { completeHandoff } from '../use-cases/handoffs/complete-handoff';
import { createHandoff } from '../use-cases/handoffs/create-handoff';
import { getHandoff } from '../use-cases/handoffs/get-handoff';
import { listAgentAssignments } from '../use-cases/handoffs/list-agent-assignments';
import { listHandoffs } from '../use-cases/handoffs/list-handoffs';
import { submitHandoffEvidence } from '../use-cases/handoffs/submit-handoff-evidence';
import { unblockHandoff } from '../use-cases/handoffs/unblock-handoff';
import type { HubHandlers } from './types';
import { actorOf, agentOf } from './types';

const DEFAULT_PAGE_SIZE = 50;

export function handoffHandlers(
  deps: HubDeps,
): HubHandlers<
  | 'listHandoffs'
  | 'createHandoff'
  | 'getHandoff'
  | 'cancelHandoff'
  | 'listMyAssignments'
  | 'acceptHandoff'
  | 'claimHandoff'
  | 'blockHandoff'
  | 'unblockHandoff'
  | 'submitHandoffEvidence'
  | 'completeHandoff'
> {
  return {
    async listHandoffs(ctx) {
      const q = ctx.query;
      const handoffs = await listHandoffs(deps, workspaceOf(ctx).id, {
        status: q.status,
        assigneeAgentId: q.assignee_agent_id,
        projectId: q.project_id,
        referenceKind: q.reference_kind,
        referenceId: q.reference_id,
        limit: q.limit ?? DEFAULT_PAGE_SIZE,
        after: q.after,
      });
      return { status: 200, body: { data: handoffs.map(presentHandoff) } };
    },
    async createHandoff(ctx) {
      const { handoff } = await createHandoff(deps, actorOf(ctx.actor), {
        workspaceId: workspaceOf(ctx).id,
        title: ctx.body.title,
        description: ctx.body.description,
        projectId: ctx.body.project_id,
        assigneeAgentId: ctx.body.assignee_agent_id,
        reference: ctx.body.reference,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentHandoff(handoff) } };
    },
    async getHandoff(ctx) {
      const handoff = await getHandoff(deps, ctx.actor, ctx.params.handoffId);
      return { status: 200, body: { data: presentHandoffDetail(handoff) } };
    },
    async cancelHandoff(ctx) {
      const handoff = await cancelHandoff(deps, actorOf(ctx.actor), ctx.params.handoffId, {
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentHandoff(handoff) } };
    },
    async listMyAssignments(ctx) {
      const handoffs = await listAgentAssignments(deps, agentOf(ctx.actor));
      return { status: 200, body: { data: handoffs.map(presentHandoff) } };
    },
    async acceptHandoff(ctx) {
      const handoff = await acceptHandoff(deps, agentOf(ctx.actor), ctx.params.handoffId, ctx.requestId);
      return { status: 200, body: { data: presentHandoff(handoff) } };
    },
    async claimHandoff(ctx) {
      const handoff = await claimHandoff(deps, agentOf(ctx.actor), ctx.params.handoffId, ctx.requestId);
      return { status: 200, body: { data: presentHandoff(handoff) } };
    },
    async blockHandoff(ctx) {
      const handoff = await blockHandoff(deps, agentOf(ctx.actor), ctx.params.handoffId, {
        reason: ctx.body.reason,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentHandoff(handoff) } };
    },
    async unblockHandoff(ctx) {
      const handoff = await unblockHandoff(deps, agentOf(ctx.actor), ctx.params.handoffId, ctx.requestId);
      return { status: 200, body: { data: presentHandoff(handoff) } };
    },
    async submitHandoffEvidence(ctx) {
      const evidence = await submitHandoffEvidence(deps, agentOf(ctx.actor), ctx.params.handoffId, {
        kind: ctx.body.kind,
        content: ctx.body.content,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentHandoffEvidence(evidence) } };
    },
    async completeHandoff(ctx) {
      const handoff = await completeHandoff(deps, agentOf(ctx.actor), ctx.params.handoffId, {
        summary: ctx.body?.summary,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentHandoff(handoff) } };
    },
  };
}
