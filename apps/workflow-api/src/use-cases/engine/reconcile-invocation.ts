import { withDeadline } from '@svc/service-kit';
import { dispatchDeliveries } from '../../data/delivery.events';
import type { DeliveryJob } from '../../data/delivery.queue';
import { lockInvocation } from '../../data/invocations.locks';
import type { WorkflowDeps } from '../../deps';
import { OPEN_STAGE_STATES, TERMINAL_STATES } from '../../domain/invocation-states';
import { ownerCheckAfterMs, ownerGone } from '../../domain/stage-owners';
import { assignStageOwner, readStageRoster } from './assign-stage-owner';
import type { StageRoster } from './assign-stage-owner';
import { awaitApproval } from './await-approval';
import { closeInvocationHandoffs } from './close-stage-handoffs';
import { endRun } from './end-run';
import { failPastDeadline } from './fail-past-deadline';
import { updateInvocation } from './reconcile-context';
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
 * counts as running (lost with its host, stopped); a stage without an owner gets one.
 */
async function advanceRun(ctx: ReconcileContext): Promise<void> {
  const stages = await ctx.tx.runStage.findMany({
    where: { invocationId: ctx.invocation.id },
    orderBy: { position: 'asc' },
  });
  const current = stages.find((s) => s.state !== 'completed' && s.state !== 'skipped');
  const keepRejected = ctx.invocation.attention === 'artifact_rejected';
  if (!current) {
    await endRun(ctx, keepRejected);
    return;
  }
  const owned = current.ownerAgentId !== null && OPEN_STAGE_STATES.includes(current.state as never);
  const silentSince = current.lastHeartbeatAt ?? current.assignedAt;
  const stale =
    owned && silentSince !== null && ctx.now.getTime() - silentSince.getTime() > ctx.deps.engine.stallAfterMs;
  // Silent for half the stall window: the hub says whether the owner still runs (a dead host's agents are
  // marked lost within seconds of its heartbeats stopping), so a lost owner's stage moves on before the stall.
  let roster: StageRoster | null = null;
  let lost: { status: string } | null = null;
  if (
    owned &&
    !stale &&
    silentSince &&
    ctx.now.getTime() - silentSince.getTime() > ownerCheckAfterMs(ctx.deps.engine)
  ) {
    roster = await readStageRoster(ctx, current);
    const gone = roster ? ownerGone(roster, current.ownerAgentId!) : null;
    if (gone) lost = { status: gone === 'absent' ? 'absent' : gone.status };
  }
  if (owned && !stale && !lost) {
    const reason = `Stage '${current.key}': ${current.blockerReason ?? 'blocked by its owner'}`;
    if (current.state === 'blocked' && !keepRejected && ctx.invocation.attentionReason !== reason) {
      await updateInvocation(ctx, { attention: 'blocked', attentionReason: reason });
    }
    return;
  }
  const stalledIds = (current.stalledAgentIds as string[]) ?? [];
  let stalledNow: string | null = null;
  if ((stale || lost) && current.ownerAgentId) {
    stalledNow = current.ownerAgentId;
    const released = await releaseStalledOwner(ctx, current, {
      owner: stalledNow,
      stalledIds,
      silentSince: silentSince!,
      ...(lost && !stale ? { cause: 'lost' as const, ownerStatus: lost.status } : {}),
    });
    if (!released) return; // a heartbeat arrived meanwhile
  }
  await assignStageOwner(ctx, current, {
    stalledNow,
    lostNow: lost !== null && !stale,
    keepRejected,
    roster,
  });
}

/**
 * Brings one invocation's run up to date with what is stored: idempotent, so running it twice (a re-enqueued
 * job, two workers) changes nothing the second time. Holds the invocation row lock for its whole transaction,
 * so reconciles of one invocation never interleave; the outbox rows it saw at the start are marked processed in
 * the same transaction. After the commit, newly assigned agents are told and the deliveries it recorded are
 * enqueued. A reconcile that does not finish within `deadlineMs` fails (the job is retried with backoff)
 * instead of holding its job.
 *
 * The pass is one state machine over the locked invocation; each step it takes is a module of this folder
 * (fail past the deadline, await approval, start the run, end it, release a stalled owner, assign an owner),
 * sharing the pass's {@link ReconcileContext}.
 */
export async function reconcileInvocation(
  deps: WorkflowDeps,
  invocationId: string,
  deadlineMs: number,
): Promise<ReconcileOutcome> {
  const outcome = await withDeadline(
    reconcileInTransaction(deps, invocationId),
    deadlineMs,
    `reconcile of ${invocationId}`,
  );
  await deps.queue.announceAssignments(outcome.assignedAgents);
  await deps.queue.announceInvocationChanges([invocationId]);
  await dispatchDeliveries(deps.db, deps.deliveries, outcome.deliveryJobs);
  if (outcome.closesHandoffs) await closeInvocationHandoffs(deps, invocationId);
  return outcome;
}

async function reconcileInTransaction(deps: WorkflowDeps, invocationId: string): Promise<ReconcileOutcome> {
  return deps.db.$transaction(
    async (tx) => {
      const invocation = await lockInvocation(tx, invocationId);
      if (!invocation) return { assignedAgents: [], deliveryJobs: [], closesHandoffs: false, state: null };
      const pending = await tx.outboxEntry.findMany({
        where: { invocationId, processedAt: null },
        select: { id: true },
      });
      const ctx: ReconcileContext = {
        deps,
        tx,
        invocation,
        now: deps.now(),
        assignedAgents: [],
        deliveryJobs: [],
        closesHandoffs: false,
      };
      if (!TERMINAL_STATES.includes(invocation.state as never)) {
        if (await failPastDeadline(ctx)) {
          // ended `failed`: nothing else to do
        } else if (ctx.invocation.state === 'launching') {
          if (ctx.invocation.approvalRequired && ctx.invocation.approvalDecision === null) {
            await awaitApproval(ctx);
          } else if (await startRun(ctx)) {
            await advanceRun(ctx);
          }
        } else if (ctx.invocation.state === 'running' || ctx.invocation.state === 'waiting_for_artifact') {
          await advanceRun(ctx);
        }
      }
      if (pending.length > 0) {
        await tx.outboxEntry.updateMany({
          where: { id: { in: pending.map((p) => p.id) } },
          data: { processedAt: ctx.now },
        });
      }
      return {
        assignedAgents: ctx.assignedAgents,
        deliveryJobs: ctx.deliveryJobs,
        closesHandoffs: ctx.closesHandoffs,
        state: ctx.invocation.state,
      };
    },
    { timeout: 30_000, maxWait: 10_000 },
  );
}
