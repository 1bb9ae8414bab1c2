import { inPooledTransaction } from '@svc/db-kit';
import { withDeadline } from '@svc/service-kit';
import { dispatchDeliveries } from '../../data/delivery.events';
import type { DeliveryJob } from '../../data/delivery.queue';
import { readRunStages, unmarkOutboxRows } from '../../data/engine-pass.writer';
import { recordHandoffClosures } from '../../data/handoff-closures';
import { lockInvocationForReconcile } from '../../data/invocations.locks';
import { sqlOn } from '../../db';
import type { WorkflowDeps } from '../../deps';
import { TERMINAL_STATES } from '../../domain/invocation-states';
import type { RunStage } from '../../generated/prisma/client';
import { assignStageOwner } from './assign-stage-owner';
import { awaitApproval } from './await-approval';
import { closeInvocationHandoffs } from './close-stage-handoffs';
import { currentStage } from './current-stage';
import { endRun } from './end-run';
import { failPastDeadline } from './fail-past-deadline';
import { planReconcile, plannedLostOwner } from './plan-reconcile';
import type { ReconcilePlan } from './plan-reconcile';
import { updateInvocation, writeEngineEvents } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';
import { releaseStalledOwner } from './release-stalled-owner';
import { startRun } from './start-run';

export interface ReconcileOutcome {
  /** Agents that got a new stage (told after the commit). */
  assignedAgents: string[];
  /** Deliveries recorded by the reconcile (enqueued after the commit). */
  deliveryJobs: DeliveryJob[];
  /** Whether stage handoffs are to be cancelled at the hub after the commit (a stalled owner, a failed run). */
  closesHandoffs: boolean;
  state: string | null;
}

/**
 * Moves the run forward from its current stage (the first neither completed nor skipped): none left ends the
 * run; an owner still heartbeating keeps it (a blocker it reported shows in the invocation's attention); an
 * owner silent past `stallAfterMs` is released, and so is one silent past half of it that the hub no longer
 * counts as running (lost with its host, stopped: the plan asked the hub, {@link plannedLostOwner}); a stage
 * without an owner gets one.
 */
async function advanceRun(ctx: ReconcileContext, started?: RunStage[]): Promise<void> {
  // A run the pass just started comes with its stages as stored; otherwise they are read under the lock.
  const stages = started ?? (await readRunStages(ctx.tx, ctx.invocation.id));
  const keepRejected = ctx.invocation.attention === 'artifact_rejected';
  const lost = plannedLostOwner(ctx.plan, stages);
  const need = currentStage(stages, ctx.now, ctx.deps.engine.stallAfterMs, lost?.agentId ?? null);
  if (need.kind === 'done') {
    await endRun(ctx, keepRejected);
    return;
  }
  const { current } = need;
  if (need.kind === 'owned') {
    const reason = `Stage '${current.key}': ${current.blockerReason ?? 'blocked by its owner'}`;
    if (current.state === 'blocked' && !keepRejected && ctx.invocation.attentionReason !== reason) {
      await updateInvocation(ctx, { attention: 'blocked', attentionReason: reason });
    }
    return;
  }
  if (need.stalledOwner) {
    const released = await releaseStalledOwner(ctx, current, {
      owner: need.stalledOwner,
      stalledIds: need.stalledIds,
      silentSince: need.silentSince!,
      ...(need.cause === 'lost' ? { cause: 'lost' as const, ownerStatus: lost?.status ?? 'absent' } : {}),
    });
    if (!released) return; // a heartbeat arrived meanwhile
  }
  await assignStageOwner(ctx, current, {
    exclude: need.exclude,
    stalledNow: need.stalledOwner,
    lostNow: need.cause === 'lost',
    keepRejected,
  });
}

/**
 * Brings one invocation's run up to date with what is stored: idempotent, so running it twice (a re-enqueued
 * job, two workers) changes nothing the second time. The hub is asked first, outside any transaction
 * ({@link planReconcile}); then one transaction holds the invocation row lock, so reconciles of one invocation
 * never interleave, checks the hub's answers still fit what it finds, and acts; the outbox rows it saw at the
 * start are marked processed in the same transaction. When the answers no longer fit (another writer moved the
 * stage meanwhile), the pass commits what it did without marking the outbox and the hub is asked again, at most
 * {@link PASSES} times before the job fails and is retried. After the commit, newly assigned agents are told and the deliveries it recorded are
 * enqueued. A reconcile that does not finish within `deadlineMs` fails (the job is retried with backoff)
 * instead of holding its job.
 *
 * The pass is one state machine over the locked invocation; each step it takes is a module of this folder
 * (fail past the deadline, await approval, start the run, end it, release a stalled owner, assign an owner),
 * sharing the pass's {@link ReconcileContext}. The outbox rows are marked in the statement that takes the lock
 * (the same rows a read there would see; unmarked again before the commit when the pass still needs the hub), and
 * the steps' audit events are written together at its end: fewer statements, the same commit.
 */
export async function reconcileInvocation(
  deps: WorkflowDeps,
  invocationId: string,
  deadlineMs: number,
): Promise<ReconcileOutcome> {
  const outcome = await withDeadline(
    reconcilePasses(deps, invocationId),
    deadlineMs,
    `reconcile of ${invocationId}`,
  );
  await deps.queue.announce({ assignedAgents: outcome.assignedAgents, invocationIds: [invocationId] });
  await dispatchDeliveries(deps.db, deps.deliveries, outcome.deliveryJobs);
  if (outcome.closesHandoffs) await closeInvocationHandoffs(deps, invocationId);
  return outcome;
}

/**
 * The hub accepted a handoff for the plan, but the invocation ended before the transaction could give it to its
 * stage (a cancel meanwhile), or its run was queued for a slot instead of started: it is recorded to be cancelled at the hub like the stage's other handoffs. A plan
 * set aside while the run goes on keeps its handoff open: the hub answers the same one when the stage is offered
 * to that agent again.
 */
async function closeUnusedHandoff(ctx: ReconcileContext): Promise<void> {
  const roster = ctx.plan?.owner?.roster;
  if (!roster || roster.kind !== 'assigned' || ctx.usedPlannedHandoff) return;
  const state = ctx.invocation.state;
  // Queued for a run slot: the run (and the stage the plan named) was not created.
  const queued = ctx.invocation.queuedAt !== null && state === 'launching';
  if (state !== 'cancelled' && state !== 'failed' && !queued) return;
  const stage = {
    id: ctx.plan!.owner!.stageId,
    invocationId: ctx.invocation.id,
    handoffId: roster.handoffId,
  };
  const reason =
    state === 'cancelled'
      ? 'invocation_cancelled'
      : state === 'failed'
        ? 'invocation_failed'
        : 'stage_released';
  if ((await recordHandoffClosures(ctx.tx, [stage], reason)) > 0) ctx.closesHandoffs = true;
}

/** Passes one reconcile may take when the hub's answers keep going stale under it. */
const PASSES = 3;

async function reconcilePasses(deps: WorkflowDeps, invocationId: string): Promise<ReconcileOutcome> {
  const done: ReconcileOutcome = { assignedAgents: [], deliveryJobs: [], closesHandoffs: false, state: null };
  for (let pass = 0; pass < PASSES; pass += 1) {
    const plan = await planReconcile(deps, invocationId);
    const outcome = await reconcileInTransaction(deps, invocationId, plan);
    done.assignedAgents.push(...outcome.assignedAgents);
    done.deliveryJobs.push(...outcome.deliveryJobs);
    done.closesHandoffs ||= outcome.closesHandoffs;
    done.state = outcome.state;
    if (!outcome.needsHub) return done;
  }
  // What the passes committed is told before the job is retried.
  await deps.queue.announceAssignments(done.assignedAgents);
  await dispatchDeliveries(deps.db, deps.deliveries, done.deliveryJobs);
  throw new Error(`reconcile of ${invocationId}: the run kept changing under it; retried`);
}

async function reconcileInTransaction(
  deps: WorkflowDeps,
  invocationId: string,
  plan: ReconcilePlan | null,
): Promise<ReconcileOutcome & { needsHub: boolean }> {
  return inPooledTransaction(deps.pool, async (client) => {
    const tx = sqlOn(client);
    // The outbox rows pending now are this pass's: marked processed with the lock, in the transaction that
    // acts on them.
    const locked = await lockInvocationForReconcile(tx, invocationId, deps.now());
    if (!locked) {
      return { assignedAgents: [], deliveryJobs: [], closesHandoffs: false, state: null, needsHub: false };
    }
    const now = deps.now();
    const { invocation, limits, outboxIds: pending } = locked;
    const ctx: ReconcileContext = {
      deps,
      tx,
      invocation,
      limits,
      now,
      assignedAgents: [],
      deliveryJobs: [],
      closesHandoffs: false,
      plan,
      needsHub: false,
      usedPlannedHandoff: false,
      events: [],
    };
    if (!TERMINAL_STATES.includes(invocation.state as never)) {
      if (await failPastDeadline(ctx)) {
        // ended `failed`: nothing else to do
      } else if (ctx.invocation.state === 'launching') {
        if (ctx.invocation.approvalRequired && ctx.invocation.approvalDecision === null) {
          await awaitApproval(ctx);
        } else {
          const started = await startRun(ctx);
          if (started !== null) await advanceRun(ctx, started === 'existing' ? undefined : started);
        }
      } else if (ctx.invocation.state === 'running' || ctx.invocation.state === 'waiting_for_artifact') {
        await advanceRun(ctx);
      }
    }
    await closeUnusedHandoff(ctx);
    await writeEngineEvents(ctx);
    // A pass that still needs the hub leaves its outbox rows to the pass (or job) that finishes.
    if (pending.length > 0 && ctx.needsHub) {
      await unmarkOutboxRows(tx, pending);
    }
    return {
      assignedAgents: ctx.assignedAgents,
      deliveryJobs: ctx.deliveryJobs,
      closesHandoffs: ctx.closesHandoffs,
      state: ctx.invocation.state,
      needsHub: ctx.needsHub,
    };
  });
}
