import type { AgentActor } from '@svc/auth';
import type { AssignmentWaiter } from '../../data/assignment.waiter';
import { loadStageAssignments } from '../../data/stage-assignments.lookups';
import type { StageAssignmentRecord } from '../../data/stage-assignments.lookups';
import type { WorkflowDeps } from '../../deps';
import { OPEN_STAGE_STATES } from '../../domain/invocation-states';
import type { RunStage } from '../../generated/prisma/client';

/** Named here for the route that passes the waiter in (routes do not import `data/`). */
export type { AssignmentWaiter };

/** The caller's open stages, oldest assignment first (at most 100). */
async function openStagesOf(deps: WorkflowDeps, actor: AgentActor): Promise<RunStage[]> {
  return deps.db.runStage.findMany({
    where: {
      ownerAgentId: actor.agentId,
      workspaceId: actor.workspaceId,
      state: { in: [...OPEN_STAGE_STATES] },
    },
    orderBy: [{ assignedAt: 'asc' }, { id: 'asc' }],
    take: 100,
  });
}

/**
 * Long-poll: the open stages now, or — when there are none and `waitSeconds` > 0 — after the next assignment
 * announced for this agent, or after the wait (an announcement lost with Redis only costs latency).
 */
export async function listMyStages(
  deps: WorkflowDeps,
  waiter: AssignmentWaiter,
  actor: AgentActor,
  waitSeconds: number,
  signal?: AbortSignal,
): Promise<StageAssignmentRecord[]> {
  let stages = await openStagesOf(deps, actor);
  if (stages.length === 0 && waitSeconds > 0) {
    await waiter.wait(actor.agentId, waitSeconds * 1000, signal);
    if (signal?.aborted) return [];
    stages = await openStagesOf(deps, actor);
  }
  return loadStageAssignments(deps.db, stages);
}
