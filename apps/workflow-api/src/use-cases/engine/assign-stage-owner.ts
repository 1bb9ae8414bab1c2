import { eligibleOwners, noStageOwnerBlocker, runHubUnreachable } from '../../domain/blockers';
import { OPEN_STAGE_STATES } from '../../domain/invocation-states';
import { stallTimesOf, stalledOwners } from '../../domain/stage-owners';
import type { RunStage } from '../../generated/prisma/client';
import { auditEngineEvent, updateInvocation } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';
import { settleStageOwnerSpawn, spawnStageOwner } from './spawn-stage-owner';

const HUB_TIMEOUT_MS = 5_000;

interface Candidate {
  agentId: string;
  rank: number;
}

export type StageRoster = NonNullable<Awaited<ReturnType<typeof readStageRoster>>>;

/** The project's roster agents holding the stage's capabilities (the hub's order); null when the hub cannot be asked. */
export async function readStageRoster(ctx: ReconcileContext, stage: RunStage) {
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  try {
    const res = await ctx.deps.hub.GET('/internal/v1/projects/{projectId}/roster', {
      params: { path: { projectId: ctx.invocation.projectId }, query: { capability: needed } },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    return res.data?.data ?? null;
  } catch (error) {
    ctx.deps.logger.warn({ err: error, invocation_id: ctx.invocation.id }, 'roster read failed');
    return null;
  }
}

/**
 * Running roster agents holding the stage's capabilities, least loaded first (then the hub's idle-first order).
 * Agents the stage was taken from are left out until they heartbeat at the hub after that; then they come after
 * every other candidate (with one capable agent, the run goes on once it is back).
 */
async function candidates(
  ctx: ReconcileContext,
  stage: RunStage,
  roster: StageRoster | null,
): Promise<Candidate[] | null> {
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  const list = roster ?? (await readStageRoster(ctx, stage));
  if (!list) return null;
  const stalled = stalledOwners(
    (stage.stalledAgentIds as string[]) ?? [],
    stallTimesOf(stage.stalledAt),
    list,
  );
  const running = eligibleOwners(list, needed, stalled.excluded);
  if (running.length === 0) return [];
  const load = await ctx.tx.runStage.groupBy({
    by: ['ownerAgentId'],
    where: { ownerAgentId: { in: running.map((a) => a.agent_id) }, state: { in: [...OPEN_STAGE_STATES] } },
    _count: { _all: true },
  });
  const open = new Map(load.map((row) => [row.ownerAgentId, row._count._all]));
  const returned = new Set(stalled.returned);
  return running
    .map((agent, index) => ({
      agentId: agent.agent_id,
      rank: (returned.has(agent.agent_id) ? 1e9 : 0) + (open.get(agent.agent_id) ?? 0) * 1000 + index,
    }))
    .sort((a, b) => a.rank - b.rank);
}

/** Gives the stage to the first candidate the hub accepts a handoff for; says whether one took it. */
async function assignFromRoster(
  ctx: ReconcileContext,
  stage: RunStage,
  roster: StageRoster | null,
): Promise<'assigned' | 'none' | 'hub'> {
  const list = await candidates(ctx, stage, roster);
  if (list === null) return 'hub';
  for (const candidate of list) {
    let res;
    try {
      res = await ctx.deps.hub.POST('/internal/v1/handoffs', {
        body: {
          workspace_id: ctx.invocation.workspaceId,
          project_id: ctx.invocation.projectId,
          assignee_agent_id: candidate.agentId,
          title: [...`Workflow stage: ${stage.title}`].slice(0, 200).join(''),
          description: `Stage ${stage.position} ('${stage.key}') of invocation ${ctx.invocation.id}.`,
          reference: {
            kind: 'workflow_stage',
            id: stage.id,
            data: {
              invocation_id: ctx.invocation.id,
              run_id: stage.runId,
              stage_key: stage.key,
              position: stage.position,
            },
          },
        },
        signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
      });
    } catch (error) {
      ctx.deps.logger.warn({ err: error, stage_id: stage.id }, 'stage handoff creation failed');
      return 'hub';
    }
    const handoff = res.data?.data;
    if (!handoff) {
      // 409 agent_evicted / 400 assignee_not_found: this agent cannot take work; try the next one.
      if (res.response.status < 500) continue;
      return 'hub';
    }
    const taken = await ctx.tx.runStage.updateMany({
      where: { id: stage.id, ownerAgentId: stage.ownerAgentId, state: stage.state },
      data: {
        ownerAgentId: candidate.agentId,
        handoffId: handoff.id,
        state: 'assigned',
        attempts: { increment: 1 },
        blockerReason: null,
        progress: null,
        assignedAt: ctx.now,
        firstAssignedAt: stage.firstAssignedAt ?? ctx.now,
        claimedAt: null,
        lastHeartbeatAt: ctx.now,
      },
    });
    if (taken.count === 0) return 'assigned';
    ctx.assignedAgents.push(candidate.agentId);
    await auditEngineEvent(
      ctx,
      'stage.assigned',
      {
        stage_key: stage.key,
        agent_id: candidate.agentId,
        handoff_id: handoff.id,
        attempt: stage.attempts + 1,
      },
      stage.id,
    );
    return 'assigned';
  }
  return 'none';
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
 * was taken from, unless it has shown life since); else, when the project's spawn policy allows, an agent the hub
 * spawns for it; else the invocation says why it waits (its blockers and attention). `stalledNow` is the owner
 * just released for not heartbeating (or lost with its host: `lostNow`), so the attention says so; an
 * `artifact_rejected` attention is kept (`keepRejected`). `roster` is the stage's roster when the caller read it.
 */
export async function assignStageOwner(
  ctx: ReconcileContext,
  current: RunStage,
  options: {
    stalledNow: string | null;
    lostNow?: boolean;
    keepRejected: boolean;
    roster?: StageRoster | null;
  },
): Promise<void> {
  const { stalledNow, keepRejected } = options;
  const outcome = await assignFromRoster(ctx, current, options.roster ?? null);
  const stalledReason = stalledNow
    ? options.lostNow
      ? `Stage '${current.key}': owner ${stalledNow} was lost (the hub no longer counts it as running; its host stopped heartbeating or it stopped)`
      : `Stage '${current.key}': owner ${stalledNow} stopped heartbeating`
    : null;
  if (outcome === 'assigned') {
    await settleStageOwnerSpawn({ deps: ctx.deps, tx: ctx.tx, stage: current });
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
    const spawn = await spawnStageOwner({
      deps: ctx.deps,
      tx: ctx.tx,
      invocation: ctx.invocation,
      stage: current,
      now: ctx.now,
    });
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
