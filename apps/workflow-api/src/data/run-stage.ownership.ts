import type { AgentActor } from '@svc/auth';
import { AppError, conflict, redactValue } from '@svc/service-kit';
import type { Tx } from '../db';
import type { WorkflowDeps } from '../deps';
import { stageNotFound } from '../domain/errors';
import { OPEN_STAGE_STATES } from '../domain/invocation-states';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { lockInvocationOfStage } from './invocations.locks';

/**
 * What every action of a stage's owner shares: the ownership check, the stage's invocation locked for the
 * action, the open-state check, the audit event and the clearing of an attention raised for the stage.
 */

export const redactText = (text: string) => String(redactValue(text));

/**
 * Why `agent` may not act on `stage`: another workspace's stage does not exist for it (404); a stage taken
 * from it after a stall is 409 `stage_reassigned`; anyone else's stage is 403 `stage_not_owned`.
 */
export function ownershipError(stage: RunStage | null, actor: AgentActor, stageId: string): AppError | null {
  if (!stage || stage.workspaceId !== actor.workspaceId) return stageNotFound(stageId);
  if (stage.ownerAgentId === actor.agentId) return null;
  if (((stage.stalledAgentIds as string[]) ?? []).includes(actor.agentId)) {
    return conflict(
      'stage_reassigned',
      'You stopped heartbeating this stage and it was reassigned to another agent; drop it.',
    );
  }
  return new AppError({
    status: 403,
    code: 'stage_not_owned',
    detail: 'Only the agent that owns this stage may act on it.',
  });
}

export interface Locked {
  tx: Tx;
  stage: RunStage;
  invocation: Invocation;
}

/**
 * Runs `fn` with the stage's invocation locked and the caller checked as the stage's owner. The lock is taken
 * through the stage in one statement; the ownership is checked on the stage read under it.
 */
export async function withOwnedStage<T>(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  fn: (locked: Locked) => Promise<T>,
): Promise<T> {
  return deps.db.$transaction(
    async (tx) => {
      const invocation = await lockInvocationOfStage(tx, stageId);
      const stage = invocation ? await tx.runStage.findUnique({ where: { id: stageId } }) : null;
      const error = ownershipError(stage, actor, stageId);
      if (error) throw error;
      if (!invocation) throw stageNotFound(stageId);
      return fn({ tx, stage: stage!, invocation });
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
}

export function assertOpen(stage: RunStage): void {
  if (stage.state === 'completed') throw conflict('stage_completed', 'The stage is already completed.');
  if (!(OPEN_STAGE_STATES as readonly string[]).includes(stage.state)) {
    throw conflict('stage_not_open', `The stage is '${stage.state}'.`);
  }
}

export async function recordStage(
  deps: WorkflowDeps,
  locked: Locked,
  actor: AgentActor,
  action: string,
  data = {},
) {
  await deps.audit.record(
    {
      workspaceId: locked.invocation.workspaceId,
      projectId: locked.invocation.projectId,
      actor,
      action,
      targetType: 'run_stage',
      targetId: locked.stage.id,
      data: { invocation_id: locked.invocation.id, stage_key: locked.stage.key, ...data },
    },
    locked.tx,
  );
}

/**
 * Clears an attention signal raised for this stage (a blocker or a stall) once its owner is working again; the
 * updated invocation replaces `locked.invocation`.
 */
export async function clearStageAttention(locked: Locked): Promise<void> {
  const { invocation } = locked;
  if (invocation.attention !== 'blocked' && invocation.attention !== 'stalled') return;
  if (invocation.state !== 'running') return;
  locked.invocation = await locked.tx.invocation.update({
    where: { id: invocation.id },
    data: { attention: 'none', attentionReason: null, blockers: [] },
  });
}
