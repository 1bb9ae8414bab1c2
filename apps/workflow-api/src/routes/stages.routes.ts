import type { AgentActor } from '@svc/auth';
import type { Request, Response } from 'express';
import { AppError } from '@svc/service-kit';
import type { WorkflowDeps } from '../deps';
import { presentAssignment, presentEvidence } from '../presenters/stages';
import { claimNextStages } from '../use-cases/stages/claim-next-stages';
import { claimStage } from '../use-cases/stages/claim-stage';
import { clearStageBlocker } from '../use-cases/stages/clear-stage-blocker';
import { completeStage } from '../use-cases/stages/complete-stage';
import { failStage } from '../use-cases/stages/fail-stage';
import { heartbeatStage } from '../use-cases/stages/heartbeat-stage';
import { listMyStages } from '../use-cases/stages/list-my-stages';
import type { AssignmentWaiter } from '../use-cases/stages/list-my-stages';
import { reportStageBlocker } from '../use-cases/stages/report-stage-blocker';
import { submitStageEvidence } from '../use-cases/stages/submit-stage-evidence';
import { withSlotSetAside } from '../transport/fair-admission';
import { actorOf } from './types';
import type { WorkflowHandlers } from './types';

function agentOf(actor: ReturnType<typeof actorOf>): AgentActor {
  if (actor.kind !== 'agent')
    throw new AppError({ status: 403, code: 'actor_not_allowed', detail: 'Agents only.' });
  return actor;
}

/** The assignment waiter of one request, its admission slot set aside while it waits (decision 100). */
function assignmentWaiterOf(req: Request, waiter: AssignmentWaiter): AssignmentWaiter {
  return {
    watch(agentId) {
      const watch = waiter.watch(agentId);
      return { wait: (ms, signal) => withSlotSetAside(req, () => watch.wait(ms, signal)), stop: watch.stop };
    },
  };
}

/** The agent-stage operations (`/agents/me/workflow-stages…`): an agent's own stages of workflow runs. */
export function stageHandlers(
  deps: WorkflowDeps,
  extra: { waiter: AssignmentWaiter },
): WorkflowHandlers<
  | 'listMyWorkflowStages'
  | 'claimNextWorkflowStages'
  | 'claimWorkflowStage'
  | 'heartbeatWorkflowStage'
  | 'reportWorkflowStageBlocker'
  | 'clearWorkflowStageBlocker'
  | 'submitWorkflowStageEvidence'
  | 'failWorkflowStage'
  | 'completeWorkflowStage'
> {
  const stageResponse = (record: Parameters<typeof presentAssignment>[0]) => ({
    status: 200 as const,
    body: { data: presentAssignment(record, deps.engine) },
  });
  /** Runs a long-poll with a signal aborted when its caller goes away (its wait then ends at once). */
  const untilClosed = async <T>(res: Response, fn: (signal: AbortSignal) => Promise<T>) => {
    const abort = new AbortController();
    const onClose = () => abort.abort();
    res.on('close', onClose);
    try {
      return await fn(abort.signal);
    } finally {
      res.off('close', onClose);
    }
  };
  const listResponse = (records: Parameters<typeof presentAssignment>[0][]) => ({
    status: 200 as const,
    body: { data: records.map((record) => presentAssignment(record, deps.engine)) },
  });
  return {
    async listMyWorkflowStages(ctx) {
      const actor = agentOf(actorOf(ctx.actor));
      const records = await untilClosed(ctx.res, (signal) =>
        listMyStages(
          deps,
          // The slot of a long-poll goes to others while it only waits (decision 100).
          assignmentWaiterOf(ctx.req, extra.waiter),
          actor,
          ctx.query.wait ?? 0,
          signal,
        ),
      );
      return listResponse(records);
    },
    async claimNextWorkflowStages(ctx) {
      const actor = agentOf(actorOf(ctx.actor));
      const records = await untilClosed(ctx.res, (signal) =>
        claimNextStages(
          deps,
          // Waits like the listing: its slot goes to others meanwhile (decision 100).
          assignmentWaiterOf(ctx.req, extra.waiter),
          actor,
          { waitSeconds: ctx.query.wait ?? 0, max: ctx.query.max ?? 1 },
          signal,
        ),
      );
      return listResponse(records);
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
    async failWorkflowStage(ctx) {
      return stageResponse(
        await failStage(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId, ctx.body.reason),
      );
    },
    async completeWorkflowStage(ctx) {
      return stageResponse(
        await completeStage(deps, agentOf(actorOf(ctx.actor)), ctx.params.stageId, ctx.body ?? {}),
      );
    },
  };
}
