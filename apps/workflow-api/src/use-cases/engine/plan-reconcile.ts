import { newId } from '@svc/service-kit';
import { openStagesByOwner, readInvocationWithStages } from '../../data/invocation-stages.lookups';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { runLimitReachedUnder } from '../../data/run-limits.lookups';
import type { RecentRead } from '../../data/hub-reads';
import type { WorkflowDeps } from '../../deps';
import { eligibleOwners } from '../../domain/blockers';
import { TERMINAL_STATES } from '../../domain/invocation-states';
import type { StoredOwnerSpawn } from '../../domain/owner-spawn';
import {
  ownerCheckAfterMs,
  ownerGone,
  stallTimesOf,
  stalledOwners,
  withStall,
} from '../../domain/stage-owners';
import type { RunStage } from '../../generated/prisma/client';
import { currentStage } from './current-stage';
import type { CurrentStage } from './current-stage';
import type { RunIds } from './run-stages';
import { unstartedRunStages } from './run-stages';
import { settleStageOwnerSpawn, spawnStageOwner } from './spawn-stage-owner';
import type { PlannedOwnerSpawn } from './spawn-stage-owner';
import { sqlOn } from '../../db';

const HUB_TIMEOUT_MS = 5_000;

/** What the hub said about the roster: a running agent accepted the stage's handoff, none could, or no answer. */
export type RosterAnswer =
  { kind: 'assigned'; agentId: string; handoffId: string } | { kind: 'none' } | { kind: 'hub' };

/** An owner the hub no longer counts as running (lost with its host, stopped) while its stage was silent. */
export interface LostOwner {
  agentId: string;
  /** What the hub said of it: its roster status, or `absent` from the roster. */
  status: string;
  /** When the stage was last heard from (ISO): the release holds only while it is still silent since then. */
  silentSince: string | null;
}

/**
 * The hub's answers for giving one stage an owner, gathered before the reconcile's transaction. They hold only
 * for the stage as it was read (`stageId`, `attempts`, `exclude` — the agents it was taken from, the one being
 * released included —, `ownerSpawn`, and for a lost owner that owner still silent since the same time): the
 * transaction checks that under the invocation's lock and otherwise asks again.
 */
export interface OwnerPlan {
  stageId: string;
  attempts: number;
  exclude: string[];
  ownerSpawn: string;
  /** The stage's owner, to be released because the hub no longer counts it as running (null: no such owner). */
  lost: LostOwner | null;
  roster: RosterAnswer;
  /** When no running agent took it: the spawn's outcome and the record the stage is to keep. */
  spawn: PlannedOwnerSpawn | null;
  /** When one took it while a spawn was in progress: the spawn's last state, to keep. */
  settled: StoredOwnerSpawn | null;
}

/** A reconcile pass's plan: the ids of the run it starts (if it starts one), and the hub's answers. */
export interface ReconcilePlan {
  run: RunIds | null;
  owner: OwnerPlan | null;
}

/**
 * Whether `plan` was made for `stage` as the transaction finds it: the same stage and attempt, the same agents
 * it was taken from (`exclude`: its stalled agents and the owner being released, stalled or lost — their stall
 * times are written with them, so the comeback ranking the plan made still holds), the same spawn record.
 */
export function planFits(plan: OwnerPlan | null, stage: RunStage, exclude: string[]): plan is OwnerPlan {
  return (
    plan !== null &&
    plan.stageId === stage.id &&
    plan.attempts === stage.attempts &&
    plan.exclude.join(',') === [...exclude].sort().join(',') &&
    plan.ownerSpawn === JSON.stringify(stage.ownerSpawn ?? null)
  );
}

/**
 * The owner the plan found lost, when it still fits the stages as the transaction finds them: the same stage
 * and attempt, the same owner, and no heartbeat since the plan read it. The transaction releases that owner
 * (cause `lost`) without asking the hub again; otherwise the owner keeps the stage (or it stalled meanwhile).
 */
export function plannedLostOwner(plan: ReconcilePlan | null, stages: RunStage[]): LostOwner | null {
  const owner = plan?.owner;
  if (!owner?.lost) return null;
  const stage = stages.find((s) => s.id === owner.stageId);
  if (!stage || stage.attempts !== owner.attempts || stage.ownerAgentId !== owner.lost.agentId) return null;
  const silentSince = (stage.lastHeartbeatAt ?? stage.assignedAt)?.toISOString() ?? null;
  return silentSince === owner.lost.silentSince ? owner.lost : null;
}

export type StageRoster = NonNullable<Awaited<ReturnType<typeof readStageRoster>>>;

/**
 * The project's roster agents holding the stage's capabilities (the hub's order), read at most
 * `engine.rosterMaxAgeMs` ago or since the hub's last roster notice of the workspace (decision 105); null when
 * the hub cannot be asked. What a stale roster costs: an owner found lost (or a stalled agent found back) that
 * much later, and a candidate that stopped or left the project meanwhile — the hub's handoff refuses an evicted,
 * stopped or lost agent and a draining host's, and the next candidate is tried ({@link handoffFromRoster}).
 */
function readStageRoster(
  deps: WorkflowDeps,
  invocation: { projectId: string; workspaceId: string },
  stage: RunStage,
  read?: RecentRead,
) {
  return deps.hubReads.recentRoster(
    { id: invocation.projectId, workspaceId: invocation.workspaceId },
    (stage.requiredCapabilities as string[]) ?? [],
    read,
  );
}

/**
 * Running roster agents holding the stage's capabilities, least loaded first (then the hub's idle-first order).
 * Agents the stage was taken from are left out until they heartbeat at the hub after that; then they come after
 * every other candidate (with one capable agent, the run goes on once it is back).
 */
async function candidates(deps: WorkflowDeps, stage: RunStage, roster: StageRoster): Promise<string[]> {
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  const stalled = stalledOwners(
    (stage.stalledAgentIds as string[]) ?? [],
    stallTimesOf(stage.stalledAt),
    roster,
  );
  const running = eligibleOwners(roster, needed, stalled.excluded);
  if (running.length === 0) return [];
  const open = await openStagesByOwner(
    deps.pool,
    running.map((a) => a.agent_id),
  );
  const returned = new Set(stalled.returned);
  return running
    .map((agent, index) => ({
      agentId: agent.agent_id,
      rank: (returned.has(agent.agent_id) ? 1e9 : 0) + (open.get(agent.agent_id) ?? 0) * 1000 + index,
    }))
    .sort((a, b) => a.rank - b.rank)
    .map((c) => c.agentId);
}

/** Refusals of a handoff that say the roster it was chosen from is out of date (decision 108). */
const STALE_ROSTER_CODES = new Set(['agent_not_running', 'agent_evicted']);

/**
 * Asks the hub for a handoff of the stage to the first candidate it accepts one for. The hub's stage handoffs
 * are idempotent per stage and agent, so asking again (a repeated pass, a plan the transaction set aside)
 * answers the same handoff. A candidate refused as stopped, lost or evicted means the roster was read before
 * that change (a roster notice lost or not arrived yet): the workspace's kept rosters are dropped and, when no
 * candidate took the stage, the roster is read again and its candidates tried once more (`retry`).
 */
async function handoffFromRoster(
  deps: WorkflowDeps,
  invocation: { id: string; workspaceId: string; projectId: string },
  stage: RunStage,
  roster: StageRoster | null,
  retry = true,
): Promise<RosterAnswer> {
  if (roster === null) return { kind: 'hub' };
  let stale = false;
  const list = await candidates(deps, stage, roster);
  for (const agentId of list) {
    let res;
    try {
      res = await deps.hub.POST('/internal/v1/handoffs', {
        body: {
          workspace_id: invocation.workspaceId,
          project_id: invocation.projectId,
          assignee_agent_id: agentId,
          title: [...`Workflow stage: ${stage.title}`].slice(0, 200).join(''),
          description: `Stage ${stage.position} ('${stage.key}') of invocation ${invocation.id}.`,
          reference: {
            kind: 'workflow_stage',
            id: stage.id,
            data: {
              invocation_id: invocation.id,
              run_id: stage.runId,
              stage_key: stage.key,
              position: stage.position,
            },
          },
        },
        signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
      });
    } catch (error) {
      deps.logger.warn({ err: error, stage_id: stage.id }, 'stage handoff creation failed');
      return { kind: 'hub' };
    }
    const handoff = res.data?.data;
    if (handoff) return { kind: 'assigned', agentId, handoffId: handoff.id };
    // 409 agent_not_running / agent_evicted / runtime_host_draining, 400 assignee_not_found: this agent cannot
    // take work; try the next one.
    if (res.response.status >= 500) return { kind: 'hub' };
    if (!stale && STALE_ROSTER_CODES.has(res.error?.code ?? '')) {
      stale = true;
      deps.hubReads.forgetRosters(invocation.workspaceId);
    }
  }
  if (!stale || !retry) return { kind: 'none' };
  const fresh = await readStageRoster(deps, invocation, stage, { fresh: true });
  return handoffFromRoster(deps, invocation, stage, fresh, false);
}

/**
 * The stage as the transaction leaves it once `need`'s owner is released (pending, that owner among the agents it
 * was taken from, at `now`), so candidates and the spawn key are judged as after the release.
 */
function asReleased(need: CurrentStage & { kind: 'needs_owner' }, now: Date): RunStage {
  const stage = need.current;
  if (!need.stalledOwner) return stage;
  return {
    ...stage,
    state: 'pending',
    ownerAgentId: null,
    handoffId: null,
    stalledAgentIds: [...need.stalledIds, need.stalledOwner],
    stalledAt: withStall(stage.stalledAt, need.stalledOwner, now),
  };
}

/**
 * Reads the invocation and its stages without a lock (one statement) and, when the pass will have to give the current stage an
 * owner, asks the hub everything that takes (roster, handoff, spawn) before the transaction opens: a slow hub
 * then holds no database connection and no row lock. An owner silent for half the stall window is asked about
 * here too (the roster): one the hub no longer counts as running is planned to be released (`lost`). A run not
 * started yet gets its ids here, so its first stage can be named to the hub. Null when the pass needs nothing
 * from the hub.
 */
export async function planReconcile(deps: WorkflowDeps, invocationId: string): Promise<ReconcilePlan | null> {
  // The invocation, its stages and its run limits in one round trip (the transaction reads them again under
  // the lock).
  const read = await readInvocationWithStages(deps.pool, invocationId);
  if (!read) return null;
  const { invocation } = read;
  if (TERMINAL_STATES.includes(invocation.state as never)) return null;
  const now = deps.now();
  if (invocation.deadlineAt && invocation.deadlineAt.getTime() <= now.getTime()) return null;
  const launching = invocation.state === 'launching';
  if (launching && invocation.approvalRequired && invocation.approvalDecision === null) return null;
  if (!launching && invocation.state !== 'running' && invocation.state !== 'waiting_for_artifact')
    return null;
  let { stages } = read;
  let run: RunIds | null = null;
  if (stages.length === 0) {
    if (!launching) return null;
    const sql = sqlOn(deps.pool);
    const template = await loadInvocationTemplate(sql, invocation);
    if (!template) return null;
    // A run that will wait for a slot needs nothing from the hub yet.
    if (await runLimitReachedUnder(sql, read.limits, invocation.projectId, invocation.workspaceId))
      return null;
    run = { runId: newId('run'), stageIds: template.definition.stages.map(() => newId('stg')) };
    stages = unstartedRunStages(invocation, run, template);
  }
  let need = currentStage(stages, now, deps.engine.stallAfterMs);
  let roster: StageRoster | null | undefined;
  let lost: LostOwner | null = null;
  if (
    need.kind === 'owned' &&
    need.silentSince !== null &&
    now.getTime() - need.silentSince.getTime() > ownerCheckAfterMs(deps.engine)
  ) {
    // Silent for half the stall window: the hub says whether the owner still runs (a dead host's agents are
    // marked lost within seconds of its heartbeats stopping), so a lost owner's stage moves on before the stall.
    const owner = need.current.ownerAgentId!;
    roster = await readStageRoster(deps, invocation, need.current);
    const gone = roster ? ownerGone(roster, owner) : null;
    if (gone) {
      lost = {
        agentId: owner,
        status: gone === 'absent' ? 'absent' : gone.status,
        silentSince: need.silentSince.toISOString(),
      };
      need = currentStage(stages, now, deps.engine.stallAfterMs, owner);
    }
  }
  if (need.kind !== 'needs_owner') return { run, owner: null };
  const stage = asReleased(need, now);
  if (roster === undefined) roster = await readStageRoster(deps, invocation, stage);
  const answer = await handoffFromRoster(deps, invocation, stage, roster);
  const spawn = answer.kind === 'none' ? await spawnStageOwner({ deps, invocation, stage, now }) : null;
  const settled = answer.kind === 'assigned' ? await settleStageOwnerSpawn(deps, stage) : null;
  return {
    run,
    owner: {
      stageId: stage.id,
      attempts: stage.attempts,
      exclude: need.exclude,
      ownerSpawn: JSON.stringify(stage.ownerSpawn ?? null),
      lost,
      roster: answer,
      spawn,
      settled,
    },
  };
}
