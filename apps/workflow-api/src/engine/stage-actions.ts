import type { AgentActor } from '@svc/auth';
import { AppError, conflict, newId, redactValue } from '@svc/service-kit';
import type { WorkflowDeps } from '../deps';
import type { Tx } from '../db';
import type { Invocation, RunStage, StageEvidence } from '../generated/prisma/client';
import { dispatchOutbox, writeOutbox } from './outbox';
import type { ReconcileJob } from './queue';
import { lockInvocation, OPEN_STAGE_STATES } from './states';

const stageNotFound = (stageId: string) =>
  new AppError({ status: 404, code: 'stage_not_found', detail: `No stage '${stageId}' in your workspace.` });

const redactText = (text: string) => String(redactValue(text));

/**
 * Why `agent` may not act on `stage`: another workspace's stage does not exist for it (404); a stage taken
 * from it after a stall is 409 `stage_reassigned`; anyone else's stage is 403 `stage_not_owned`.
 */
function ownershipError(stage: RunStage | null, actor: AgentActor, stageId: string): AppError | null {
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

interface Locked {
  tx: Tx;
  stage: RunStage;
  invocation: Invocation;
}

/** Runs `fn` with the stage's invocation locked and the caller checked as the stage's owner. */
async function withOwnedStage<T>(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  fn: (locked: Locked) => Promise<T>,
): Promise<T> {
  const peek = await deps.db.runStage.findUnique({ where: { id: stageId } });
  const early = ownershipError(peek, actor, stageId);
  if (early) throw early;
  return deps.db.$transaction(
    async (tx) => {
      const invocation = await lockInvocation(tx, peek!.invocationId);
      const stage = await tx.runStage.findUnique({ where: { id: stageId } });
      const error = ownershipError(stage, actor, stageId);
      if (error) throw error;
      if (!invocation) throw stageNotFound(stageId);
      return fn({ tx, stage: stage!, invocation });
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
}

function assertOpen(stage: RunStage): void {
  if (stage.state === 'completed') throw conflict('stage_completed', 'The stage is already completed.');
  if (!(OPEN_STAGE_STATES as readonly string[]).includes(stage.state)) {
    throw conflict('stage_not_open', `The stage is '${stage.state}'.`);
  }
}

async function recordStage(deps: WorkflowDeps, locked: Locked, actor: AgentActor, action: string, data = {}) {
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

/** Clears an attention signal raised for this stage (a blocker or a stall) once its owner is working again. */
async function clearStageAttention(locked: Locked): Promise<void> {
  const { invocation } = locked;
  if (invocation.attention !== 'blocked' && invocation.attention !== 'stalled') return;
  if (invocation.state !== 'running') return;
  await locked.tx.invocation.update({
    where: { id: invocation.id },
    data: { attention: 'none', attentionReason: null, blockers: [] },
  });
}

/** `assigned` → `claimed` (a blocked stage resumes); repeating it is harmless. Counts as a heartbeat. */
export async function claimStage(deps: WorkflowDeps, actor: AgentActor, stageId: string): Promise<RunStage> {
  return withOwnedStage(deps, actor, stageId, async (locked) => {
    assertOpen(locked.stage);
    const now = deps.now();
    const first = locked.stage.state === 'assigned';
    const stage = await locked.tx.runStage.update({
      where: { id: stageId },
      data: {
        state: 'claimed',
        blockerReason: null,
        lastHeartbeatAt: now,
        ...(first ? { claimedAt: now } : {}),
      },
    });
    if (locked.stage.state !== 'claimed') {
      await clearStageAttention(locked);
      await recordStage(deps, locked, actor, first ? 'stage.claimed' : 'stage.resumed');
    }
    return stage;
  });
}

/** Liveness of the owner (no lock: one conditional update); a progress note is redacted and kept. */
export async function heartbeatStage(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  progress?: string,
): Promise<RunStage> {
  const now = deps.now();
  const updated = await deps.db.runStage.updateMany({
    where: {
      id: stageId,
      workspaceId: actor.workspaceId,
      ownerAgentId: actor.agentId,
      state: { in: [...OPEN_STAGE_STATES] },
    },
    data: { lastHeartbeatAt: now, ...(progress !== undefined ? { progress: redactText(progress) } : {}) },
  });
  const stage = await deps.db.runStage.findUnique({ where: { id: stageId } });
  const error = ownershipError(stage, actor, stageId);
  if (error) throw error;
  if (updated.count === 0) assertOpen(stage!);
  return stage!;
}

/** The owner cannot go on: the stage is `blocked` and the invocation's attention says why. */
export async function reportStageBlocker(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  reason: string,
): Promise<RunStage> {
  return withOwnedStage(deps, actor, stageId, async (locked) => {
    assertOpen(locked.stage);
    const clean = redactText(reason);
    const stage = await locked.tx.runStage.update({
      where: { id: stageId },
      data: { state: 'blocked', blockerReason: clean, lastHeartbeatAt: deps.now() },
    });
    if (locked.invocation.state === 'running' && locked.invocation.attention !== 'artifact_rejected') {
      await locked.tx.invocation.update({
        where: { id: locked.invocation.id },
        data: { attention: 'blocked', attentionReason: `Stage '${stage.key}': ${clean}` },
      });
    }
    await recordStage(deps, locked, actor, 'stage.blocked', { reason: clean });
    return stage;
  });
}

/** The blocker is gone: the stage is `claimed` again and the attention clears. */
export async function clearStageBlocker(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
): Promise<RunStage> {
  return claimStage(deps, actor, stageId);
}

/** Evidence attached by the owner, redacted before it is stored. */
export async function submitStageEvidence(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  input: { kind: string; content: unknown },
): Promise<StageEvidence> {
  const stage = await deps.db.runStage.findUnique({ where: { id: stageId } });
  const error = ownershipError(stage, actor, stageId);
  if (error) throw error;
  return deps.db.stageEvidence.create({
    data: {
      id: newId('evd'),
      stageId,
      agentId: actor.agentId,
      kind: input.kind,
      content: (redactValue(input.content ?? null) ?? null) as never,
    },
  });
}

/** Completes the stage (idempotent) and queues the reconcile that moves the run on. */
export async function completeStage(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  summary?: string,
): Promise<RunStage> {
  const jobs: ReconcileJob[] = [];
  const stage = await withOwnedStage(deps, actor, stageId, async (locked) => {
    if (locked.stage.state === 'completed') return locked.stage;
    assertOpen(locked.stage);
    const now = deps.now();
    const done = await locked.tx.runStage.update({
      where: { id: stageId },
      data: {
        state: 'completed',
        completedAt: now,
        lastHeartbeatAt: now,
        blockerReason: null,
        ...(summary !== undefined ? { summary: redactText(summary) } : {}),
      },
    });
    await clearStageAttention(locked);
    jobs.push(await writeOutbox(locked.tx, locked.invocation.id, 'stage_completed'));
    await recordStage(deps, locked, actor, 'stage.completed', {
      duration_ms: done.firstAssignedAt ? now.getTime() - done.firstAssignedAt.getTime() : null,
    });
    return done;
  });
  await dispatchOutbox(deps.db, deps.queue, jobs);
  return stage;
}
