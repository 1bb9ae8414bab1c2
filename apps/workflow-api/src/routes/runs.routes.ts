import type { AgentActor, ParticipantActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import { projectOf } from '../auth/access-guard';
import type { MemberDirectory } from '../auth/member-directory';
import type { WorkflowDeps } from '../deps';
import type { ArtifactValidatorCache } from '../domain/artifact-schema-rules';
import type { AssignmentWaiter } from '../data/assignment.waiter';
import { presentEnvelope } from '../presenters/artifacts';
import { presentInvocation } from '../presenters/invocations';
import { presentAssignment, presentEvidence } from '../presenters/stages';
import { cancelInvocation } from '../use-cases/runs/cancel-invocation';
import { claimStage } from '../use-cases/runs/claim-stage';
import { clearStageBlocker } from '../use-cases/runs/clear-stage-blocker';
import { completeStage } from '../use-cases/runs/complete-stage';
import { decideApproval } from '../use-cases/runs/decide-approval';
import { failStage } from '../use-cases/runs/fail-stage';
import { getArtifact } from '../use-cases/runs/get-artifact';
import { heartbeatStage } from '../use-cases/runs/heartbeat-stage';
import { launchInvocation } from '../use-cases/runs/launch-invocation';
import { listMyStages } from '../use-cases/runs/list-my-stages';
import { publishArtifact } from '../use-cases/runs/publish-artifact';
import { reportStageBlocker } from '../use-cases/runs/report-stage-blocker';
import { submitStageEvidence } from '../use-cases/runs/submit-stage-evidence';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

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
  | 'cancelInvocation'
  | 'failWorkflowStage'
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
  const stageResponse = (record: Parameters<typeof presentAssignment>[0]) => ({
    status: 200 as const,
    body: { data: presentAssignment(record, deps.engine) },
  });
  return {
    async launchInvocation(ctx) {
      const { invocation, details, accepted, launch } = await launchInvocation(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        ctx.requestId,
      );
      const body = { data: presentInvocation(invocation, details), launch };
      return accepted ? { status: 202, body } : { status: 200, body };
    },
    async cancelInvocation(ctx) {
      const body = (ctx.body ?? {}) as { reason?: string };
      const { invocation, details } = await cancelInvocation(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        body.reason,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentInvocation(invocation, details) } };
    },
    async failWorkflowStage(ctx) {
      return stageResponse(
        await failStage(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId, ctx.body.reason),
      );
    },
    async decideInvocationApproval(ctx) {
      const { invocation, details } = await decideApproval(
        deps,
        extra.members,
        actorOf(ctx.actor) as ParticipantActor,
        projectOf(ctx),
        ctx.params.invocationId,
        {
          decision: ctx.body.decision,
          ...(ctx.body.comment !== undefined ? { comment: ctx.body.comment } : {}),
        },
        ctx.requestId,
      );
      return { status: 200, body: { data: presentInvocation(invocation, details) } };
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
        const records = await listMyStages(
          deps,
          extra.waiter,
          agentOf(actorOf(ctx.actor)),
          ctx.query.wait ?? 0,
          abort.signal,
        );
        return {
          status: 200,
          body: { data: records.map((record) => presentAssignment(record, deps.engine)) },
        };
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
      return { status: 201, body: { data: presentEvidence(evidence) } };
    },
    async completeWorkflowStage(ctx) {
      const body = (ctx.body ?? {}) as { summary?: string };
      return stageResponse(
        await completeStage(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId, body.summary),
      );
    },
  };
}
