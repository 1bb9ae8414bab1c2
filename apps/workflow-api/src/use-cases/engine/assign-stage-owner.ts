import { assignStage, keepOwnerSpawn } from '../../data/engine-pass.writer';
import { noStageOwnerBlocker, runHubUnreachable } from '../../domain/blockers';
import type { RunStage } from '../../generated/prisma/client';
import { planFits } from './plan-reconcile';
import type { OwnerPlan, RosterAnswer } from './plan-reconcile';
import { auditEngineEvent, updateInvocation } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';

/** Gives the stage to the agent whose handoff the hub accepted before the transaction; says whether it took it. */
async function assignFromPlan(
  ctx: ReconcileContext,
  stage: RunStage,
  plan: OwnerPlan,
): Promise<RosterAnswer['kind']> {
  const answer = plan.roster;
  if (answer.kind !== 'assigned') return answer.kind;
  const taken = await assignStage(
    ctx.tx,
    stage,
    {
      agentId: answer.agentId,
      handoffId: answer.handoffId,
      // The spawn's last state, when one was in progress (read with the hub's other answers).
      ...(plan.settled ? { ownerSpawn: plan.settled } : {}),
    },
    ctx.now,
  );
  if (!taken) return 'assigned';
  ctx.usedPlannedHandoff = true;
  ctx.assignedAgents.push(answer.agentId);
  await auditEngineEvent(
    ctx,
    'stage.assigned',
    {
      stage_key: stage.key,
      agent_id: answer.agentId,
      handoff_id: answer.handoffId,
      attempt: stage.attempts + 1,
    },
    stage.id,
  );
  return 'assigned';
}

/** Whether the invocation already holds what `patch` would write (no blockers, the same attention). */
function alreadyPatched(
  ctx: ReconcileContext,
  patch: { blockers: unknown[]; attention?: string; attentionReason?: string | null },
): boolean {
  const { invocation } = ctx;
  const blockers = Array.isArray(invocation.blockers) ? invocation.blockers : [];
  return (
    blockers.length === 0 &&
    (patch.attention === undefined || patch.attention === invocation.attention) &&
    (patch.attentionReason === undefined || patch.attentionReason === invocation.attentionReason)
  );
}

/**
 * Finds an owner for the current stage: a running roster agent the hub accepts a handoff for (not one the stage
 * was taken from, `exclude`, unless it has heartbeated at the hub since: then after every other candidate);
 * else, when the project's spawn policy allows, an agent the hub spawns for it; else the invocation says why it
 * waits (its blockers and attention). `stalledNow` is the owner just released for not heartbeating (or lost with
 * its host: `lostNow`), so the attention says so; an `artifact_rejected` attention is kept (`keepRejected`).
 *
 * The hub was asked before the transaction (the pass's plan). When the plan does not fit the stage as found
 * under the lock (another writer changed it meanwhile), nothing is written and the pass says it needs the hub
 * again (`ctx.needsHub`): the reconcile asks again and runs another pass.
 */
export async function assignStageOwner(
  ctx: ReconcileContext,
  current: RunStage,
  options: { exclude: string[]; stalledNow: string | null; lostNow?: boolean; keepRejected: boolean },
): Promise<void> {
  const { exclude, stalledNow, keepRejected } = options;
  const plan = ctx.plan?.owner ?? null;
  if (!planFits(plan, current, exclude)) {
    ctx.needsHub = true;
    return;
  }
  const outcome = await assignFromPlan(ctx, current, plan);
  const stalledReason = stalledNow
    ? options.lostNow
      ? `Stage '${current.key}': owner ${stalledNow} was lost (the hub no longer counts it as running; its host stopped heartbeating or it stopped)`
      : `Stage '${current.key}': owner ${stalledNow} stopped heartbeating`
    : null;
  if (outcome === 'assigned') {
    const patch = {
      blockers: [],
      ...(stalledReason
        ? { attention: 'stalled', attentionReason: `${stalledReason}; reassigned.` }
        : keepRejected || ctx.invocation.attention === 'stalled'
          ? {}
          : { attention: 'none', attentionReason: null }),
    };
    // A first assignment usually finds the invocation as the patch would leave it: nothing to write then.
    if (!alreadyPatched(ctx, patch)) await updateInvocation(ctx, patch);
    return;
  }
  if (outcome === 'none') {
    // No roster agent can own it: the hub may spawn one when the project's spawn policy allows.
    const planned = plan.spawn!;
    const spawn = planned.outcome;
    if (planned.keep) {
      await keepOwnerSpawn(ctx.tx, current.id, planned.keep);
    }
    if (spawn.kind === 'spawning') {
      if (spawn.requested) {
        await auditEngineEvent(
          ctx,
          'stage.owner_spawn_requested',
          {
            stage_key: current.key,
            spawn_id: spawn.requested.spawn_id,
            agent_name: spawn.requested.agent_name,
            runtime_instance_id: spawn.requested.runtime_instance_id,
            attempt: spawn.requested.attempt + 1,
          },
          current.id,
        );
      }
      await updateInvocation(ctx, {
        blockers: [spawn.blocker],
        attention: 'owner_spawning',
        attentionReason: stalledReason ? `${stalledReason}; ${spawn.blocker.message}` : spawn.blocker.message,
      });
      return;
    }
    const noOwner = noStageOwnerBlocker(
      current,
      stalledNow ? 'its owner stalled and no other agent is available' : 'none is available',
    );
    const blockers =
      spawn.kind === 'failed'
        ? [noOwner, spawn.blocker]
        : spawn.kind === 'not_allowed'
          ? [noOwner, ...spawn.blockers]
          : [noOwner];
    await updateInvocation(ctx, {
      blockers,
      attention: stalledReason || ctx.invocation.attention === 'stalled' ? 'stalled' : 'blocked',
      attentionReason: stalledReason ? `${stalledReason}; ${noOwner.message}` : noOwner.message,
    });
    return;
  }
  await updateInvocation(ctx, {
    blockers: [runHubUnreachable],
    attention: stalledReason || ctx.invocation.attention === 'stalled' ? 'stalled' : 'blocked',
    attentionReason: stalledReason
      ? `${stalledReason}; ${runHubUnreachable.message}`
      : runHubUnreachable.message,
  });
}
