// One file because the reconcile pass is one state machine over one locked invocation: its steps (start the run,
// assign owners, advance, end past the deadline) share the transaction's context, and splitting them would hand
// that context across modules for no reader's benefit.
import { newId, withDeadline } from '@svc/service-kit';
import { dispatchDeliveries, recordDeliveryEvent } from '../../data/delivery.events';
import type { DeliveryJob } from '../../data/delivery.queue';
import { recordHandoffClosures } from '../../data/handoff-closures';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { endInvocation } from '../../data/invocation.ending';
import { lockInvocation } from '../../data/invocations.locks';
import type { Tx } from '../../db';
import type { WorkflowDeps } from '../../deps';
import { eligibleOwners, noStageOwnerBlocker, runHubUnreachable, withEffect } from '../../domain/blockers';
import type { Blocker } from '../../domain/blockers';
import { failureOf, isFailable } from '../../domain/invocation-ending';
import { OPEN_STAGE_STATES, TERMINAL_STATES } from '../../domain/invocation-states';
import type { Invocation, RunStage } from '../../generated/prisma/client';
import { closeInvocationHandoffs } from './close-stage-handoffs';
import { settleStageOwnerSpawn, spawnStageOwner } from './spawn-stage-owner';

const HUB_TIMEOUT_MS = 5_000;

export interface ReconcileOutcome {
  /** Agents that got a new stage (told after the commit). */
  assignedAgents: string[];
  /** Deliveries recorded by the reconcile (enqueued after the commit). */
  deliveryJobs: DeliveryJob[];
  /** Whether stage handoffs are to be cancelled at the hub after the commit (a stalled owner, a failed run). */
  closesHandoffs: boolean;
  state: string | null;
}

type Patch = Partial<
  Pick<
    Invocation,
    'state' | 'attention' | 'attentionReason' | 'launchedAt' | 'approvalRequired' | 'completedAt'
  >
> & { blockers?: Blocker[] };

interface Ctx {
  deps: WorkflowDeps;
  tx: Tx;
  invocation: Invocation;
  now: Date;
  assignedAgents: string[];
  /** Delivery rows written in this transaction, enqueued after the commit. */
  deliveryJobs: DeliveryJob[];
  /** Whether hub handoffs were recorded to be closed (cancelled at the hub after the commit). */
  closesHandoffs: boolean;
}

async function update(ctx: Ctx, patch: Patch): Promise<void> {
  const { blockers, ...rest } = patch;
  ctx.invocation = await ctx.tx.invocation.update({
    where: { id: ctx.invocation.id },
    data: { ...rest, ...(blockers !== undefined ? { blockers: blockers as never } : {}) },
  });
}

async function audit(ctx: Ctx, action: string, data: Record<string, unknown>, targetId?: string) {
  await ctx.deps.audit.record(
    {
      workspaceId: ctx.invocation.workspaceId,
      projectId: ctx.invocation.projectId,
      actor: { kind: 'service', service: 'workflow-engine' },
      action,
      targetType: targetId ? 'run_stage' : 'invocation',
      targetId: targetId ?? ctx.invocation.id,
      data: { invocation_id: ctx.invocation.id, ...data },
    },
    ctx.tx,
  );
}

/** Creates the run and its stages from the pinned template (once: the run is unique per invocation). */
async function startRun(ctx: Ctx): Promise<boolean> {
  const existing = await ctx.tx.workflowRun.findUnique({ where: { invocationId: ctx.invocation.id } });
  if (existing) return true;
  const template = await loadInvocationTemplate(ctx.tx, ctx.invocation);
  if (!template) {
    await update(ctx, {
      state: 'blocked',
      attention: 'blocked',
      attentionReason: 'The pinned template no longer exists.',
      blockers: [
        withEffect({
          category: 'classifier_template_configuration',
          code: 'template_not_found',
          message: 'The template this invocation pinned could not be found.',
          recommended_action: 'Invoke again with a contract whose template exists.',
        }),
      ],
    });
    return false;
  }
  const runId = newId('run');
  await ctx.tx.workflowRun.create({
    data: {
      id: runId,
      invocationId: ctx.invocation.id,
      workspaceId: ctx.invocation.workspaceId,
      projectId: ctx.invocation.projectId,
      startedAt: ctx.now,
    },
  });
  await ctx.tx.runStage.createMany({
    data: template.definition.stages.map((stage, i) => ({
      id: newId('stg'),
      runId,
      invocationId: ctx.invocation.id,
      workspaceId: ctx.invocation.workspaceId,
      position: i + 1,
      key: stage.key,
      title: stage.title,
      requiredCapabilities: [...new Set(stage.required_capabilities)].sort(),
    })),
  });
  await update(ctx, { state: 'running', launchedAt: ctx.invocation.launchedAt ?? ctx.now });
  await audit(ctx, 'run.started', { run_id: runId, stages: template.definition.stages.map((s) => s.key) });
  return true;
}

interface Candidate {
  agentId: string;
  rank: number;
}

/** Running roster agents holding the stage's capabilities, least loaded first (then the hub's idle-first order). */
async function candidates(ctx: Ctx, stage: RunStage, exclude: string[]): Promise<Candidate[] | null> {
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  let roster;
  try {
    const res = await ctx.deps.hub.GET('/internal/v1/projects/{projectId}/roster', {
      params: { path: { projectId: ctx.invocation.projectId }, query: { capability: needed } },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    roster = res.data?.data;
  } catch (error) {
    ctx.deps.logger.warn({ err: error, invocation_id: ctx.invocation.id }, 'roster read failed');
  }
  if (!roster) return null;
  const running = eligibleOwners(roster, needed, exclude);
  if (running.length === 0) return [];
  const load = await ctx.tx.runStage.groupBy({
    by: ['ownerAgentId'],
    where: { ownerAgentId: { in: running.map((a) => a.agent_id) }, state: { in: [...OPEN_STAGE_STATES] } },
    _count: { _all: true },
  });
  const open = new Map(load.map((row) => [row.ownerAgentId, row._count._all]));
  return running
    .map((agent, index) => ({
      agentId: agent.agent_id,
      rank: (open.get(agent.agent_id) ?? 0) * 1000 + index,
    }))
    .sort((a, b) => a.rank - b.rank);
}

/** Gives the stage to the first candidate the hub accepts a handoff for; returns whether one took it. */
async function assign(ctx: Ctx, stage: RunStage, exclude: string[]): Promise<'assigned' | 'none' | 'hub'> {
  const list = await candidates(ctx, stage, exclude);
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
    await audit(
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

/** Moves the run forward: current stage owner, stalls, end of run. */
async function advanceRun(ctx: Ctx): Promise<void> {
  const stages = await ctx.tx.runStage.findMany({
    where: { invocationId: ctx.invocation.id },
    orderBy: { position: 'asc' },
  });
  const current = stages.find((s) => s.state !== 'completed' && s.state !== 'skipped');
  const keepRejected = ctx.invocation.attention === 'artifact_rejected';
  if (!current) {
    if (ctx.invocation.state !== 'waiting_for_artifact') {
      await ctx.tx.workflowRun.updateMany({
        where: { invocationId: ctx.invocation.id, endedAt: null },
        data: { state: 'ended', endedAt: ctx.now },
      });
      await update(ctx, {
        state: 'waiting_for_artifact',
        ...(keepRejected ? {} : { attention: 'none', attentionReason: null }),
        blockers: [],
      });
      await audit(ctx, 'run.ended_without_artifact', {});
      ctx.deliveryJobs.push(
        ...(await recordDeliveryEvent(
          ctx.tx,
          ctx.invocation,
          'invocation.waiting_for_artifact',
          null,
          ctx.now,
        )),
      );
    }
    return;
  }
  const owned = current.ownerAgentId !== null && OPEN_STAGE_STATES.includes(current.state as never);
  const silentSince = current.lastHeartbeatAt ?? current.assignedAt;
  const stale =
    owned && silentSince !== null && ctx.now.getTime() - silentSince.getTime() > ctx.deps.engine.stallAfterMs;
  if (owned && !stale) {
    const reason = `Stage '${current.key}': ${current.blockerReason ?? 'blocked by its owner'}`;
    if (current.state === 'blocked' && !keepRejected && ctx.invocation.attentionReason !== reason) {
      await update(ctx, { attention: 'blocked', attentionReason: reason });
    }
    return;
  }
  const stalledIds = (current.stalledAgentIds as string[]) ?? [];
  let stalledNow: string | null = null;
  if (stale && current.ownerAgentId) {
    stalledNow = current.ownerAgentId;
    const released = await ctx.tx.runStage.updateMany({
      where: {
        id: current.id,
        ownerAgentId: current.ownerAgentId,
        lastHeartbeatAt: current.lastHeartbeatAt,
      },
      data: {
        state: 'pending',
        ownerAgentId: null,
        handoffId: null,
        stalledAgentIds: [...stalledIds, current.ownerAgentId],
      },
    });
    if (released.count === 0) return; // a heartbeat arrived meanwhile
    if ((await recordHandoffClosures(ctx.tx, [current], 'stage_released')) > 0) ctx.closesHandoffs = true;
    await audit(
      ctx,
      'stage.stalled',
      {
        stage_key: current.key,
        agent_id: current.ownerAgentId,
        silent_ms: ctx.now.getTime() - silentSince!.getTime(),
      },
      current.id,
    );
    current.ownerAgentId = null;
    current.state = 'pending';
    current.handoffId = null;
  }
  const exclude = stalledNow ? [...stalledIds, stalledNow] : stalledIds;
  const outcome = await assign(ctx, current, exclude);
  const stalledReason = stalledNow
    ? `Stage '${current.key}': owner ${stalledNow} stopped heartbeating`
    : null;
  if (outcome === 'assigned') {
    await settleStageOwnerSpawn({ deps: ctx.deps, tx: ctx.tx, stage: current });
    await update(ctx, {
      blockers: [],
      ...(stalledReason
        ? { attention: 'stalled', attentionReason: `${stalledReason}; reassigned.` }
        : keepRejected || ctx.invocation.attention === 'stalled'
          ? {}
          : { attention: 'none', attentionReason: null }),
    });
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
        await audit(
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
      await update(ctx, {
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
    await update(ctx, {
      blockers,
      attention: stalledReason || ctx.invocation.attention === 'stalled' ? 'stalled' : 'blocked',
      attentionReason: stalledReason ? `${stalledReason}; ${noOwner.message}` : noOwner.message,
    });
    return;
  }
  await update(ctx, {
    blockers: [runHubUnreachable],
    attention: stalledReason || ctx.invocation.attention === 'stalled' ? 'stalled' : 'blocked',
    attentionReason: stalledReason
      ? `${stalledReason}; ${runHubUnreachable.message}`
      : runHubUnreachable.message,
  });
}

/** A launched run past the template's deadline ends `failed` (`run_deadline_exceeded`); true when it did. */
async function failPastDeadline(ctx: Ctx): Promise<boolean> {
  const { invocation } = ctx;
  if (!invocation.deadlineAt || invocation.deadlineAt.getTime() > ctx.now.getTime()) return false;
  if (!isFailable(invocation.state)) return false;
  const inProgress = await ctx.tx.runStage.findFirst({
    where: { invocationId: invocation.id, state: { notIn: ['completed', 'skipped'] } },
    orderBy: { position: 'asc' },
  });
  const launchedAt = invocation.launchedAt ?? invocation.createdAt;
  const ended = await endInvocation(
    ctx.deps,
    ctx.tx,
    invocation,
    {
      state: 'failed',
      failure: failureOf('run_deadline_exceeded', ctx.now, {
        stageKey: inProgress?.key ?? null,
        deadlineSeconds: Math.round((invocation.deadlineAt.getTime() - launchedAt.getTime()) / 1000),
      }),
    },
    { kind: 'service', service: 'workflow-engine' },
    ctx.now,
  );
  ctx.invocation = ended.invocation;
  ctx.deliveryJobs.push(...ended.deliveryJobs);
  ctx.closesHandoffs = true;
  return true;
}

/**
 * Brings one invocation's run up to date with what is stored: idempotent, so running it twice (a re-enqueued
 * job, two workers) changes nothing the second time. Holds the invocation row lock for its whole transaction,
 * so reconciles of one invocation never interleave; the outbox rows it saw at the start are marked processed in
 * the same transaction. After the commit, newly assigned agents are told and the deliveries it recorded are
 * enqueued. A reconcile that does not finish within `deadlineMs` fails (the job is retried with backoff)
 * instead of holding its job.
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
      const ctx: Ctx = {
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
            await update(ctx, {
              state: 'awaiting_approval',
              attention: 'approval_required',
              attentionReason:
                "The template's guardrail requires a participant's approval before the run starts.",
            });
            await audit(ctx, 'invocation.awaiting_approval', {});
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
