import type { AgentActor, ParticipantActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import { projectOf } from '../auth/access-guard';
import type { MemberDirectory } from '../auth/member-directory';
import type { WorkflowDeps } from '../deps';
import { decideApproval } from '../engine/approval';
import { getArtifact, presentEnvelope, publishArtifact } from '../engine/artifacts';
import { loadRunDetails, presentInvocation } from '../engine/invocation-view';
import { launchInvocation } from '../engine/launch';
import { listMyStages, presentAssignments } from '../engine/my-stages';
import type { AssignmentWaiter } from '../engine/my-stages';
import {
  claimStage,
  clearStageBlocker,
  completeStage,
  heartbeatStage,
  reportStageBlocker,
  submitStageEvidence,
} from '../engine/stage-actions';
import type { ArtifactValidatorCache } from '../use-cases/artifact-schema-rules';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

const APPROVER_ROLES = ['owner', 'admin'];

function agentOf(actor: ReturnType<typeof actorOf>): AgentActor {
  if (actor.kind !== 'agent')
    throw new AppError({ status: 403, code: 'actor_not_allowed', detail: 'Agents only.' });
  return actor;
}

export function runHandlers(
  deps: WorkflowDeps,
  extra: { validators: ArtifactValidatorCache; waiter: AssignmentWaiter; members: MemberDirectory },
): WorkflowHandlers<
  | 'launchInvocation'
  | 'decideInvocationApproval'
  | 'getInvocationArtifact'
  | 'publishInvocationArtifact'
  | 'listMyWorkflowStages'
  | 'claimWorkflowStage'
  | 'heartbeatWorkflowStage'
  | 'reportWorkflowStageBlocker'
  | 'clearWorkflowStageBlocker'
  | 'submitWorkflowStageEvidence'
  | 'completeWorkflowStage'
> {
  const stageResponse = async (stage: Parameters<typeof presentAssignments>[1][number]) => {
    const [view] = await presentAssignments(deps, [stage]);
    return { status: 200 as const, body: { data: view! } };
  };
  return {
    async launchInvocation(ctx) {
      const { invocation, accepted } = await launchInvocation(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        ctx.requestId,
      );
      const body = { data: presentInvocation(invocation, await loadRunDetails(deps.db, invocation.id)) };
      return accepted ? { status: 202, body } : { status: 200, body };
    },
    async decideInvocationApproval(ctx) {
      const actor = actorOf(ctx.actor) as ParticipantActor;
      const project = projectOf(ctx);
      const member = await extra.members.find(project.workspace.id, actor.participantId);
      if (!member || !APPROVER_ROLES.includes(member.role)) {
        throw new AppError({
          status: 403,
          code: 'approval_role_required',
          detail: 'Only a workspace owner or admin may approve or reject a run.',
        });
      }
      const invocation = await decideApproval(
        deps,
        actor,
        project,
        ctx.params.invocationId,
        {
          decision: ctx.body.decision,
          ...(ctx.body.comment !== undefined ? { comment: ctx.body.comment } : {}),
        },
        ctx.requestId,
      );
      return {
        status: 200,
        body: { data: presentInvocation(invocation, await loadRunDetails(deps.db, invocation.id)) },
      };
    },
    async getInvocationArtifact(ctx) {
      const artifact = await getArtifact(deps, projectOf(ctx).id, ctx.params.invocationId);
      return { status: 200, body: { data: presentEnvelope(artifact) } };
    },
    async publishInvocationArtifact(ctx) {
      const { artifact, replayed } = await publishArtifact(
        deps,
        extra.validators,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        ctx.body,
        ctx.requestId,
      );
      return { status: replayed ? 200 : 201, body: { data: presentEnvelope(artifact) } };
    },
    async listMyWorkflowStages(ctx) {
      const abort = new AbortController();
      const onClose = () => abort.abort();
      ctx.res.on('close', onClose);
      try {
        const data = await listMyStages(
          deps,
          extra.waiter,
          agentOf(actorOf(ctx.actor)),
          ctx.query.wait ?? 0,
          abort.signal,
        );
        return { status: 200, body: { data } };
      } finally {
        ctx.res.off('close', onClose);
      }
    },
    async claimWorkflowStage(ctx) {
      return stageResponse(await claimStage(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId));
    },
    async heartbeatWorkflowStage(ctx) {
      const body = (ctx.body ?? {}) as { progress?: string };
      return stageResponse(
        await heartbeatStage(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId, body.progress),
      );
    },
    async reportWorkflowStageBlocker(ctx) {
      return stageResponse(
        await reportStageBlocker(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId, ctx.body.reason),
      );
    },
    async clearWorkflowStageBlocker(ctx) {
      return stageResponse(await clearStageBlocker(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId));
    },
    async submitWorkflowStageEvidence(ctx) {
      const evidence = await submitStageEvidence(
        deps,
        agentOf(actorOf(ctx.actor)),
        ctx.params.stageId,
        ctx.body,
      );
      return {
        status: 201,
        body: {
          data: {
            evidence_id: evidence.id,
            stage_id: evidence.stageId,
            kind: evidence.kind,
            content: evidence.content,
            created_at: evidence.createdAt.toISOString(),
          },
        },
      };
    },
    async completeWorkflowStage(ctx) {
      const body = (ctx.body ?? {}) as { summary?: string };
      return stageResponse(
        await completeStage(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId, body.summary),
      );
    },
  };
}
