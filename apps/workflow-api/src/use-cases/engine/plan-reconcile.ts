import { newId } from '@svc/service-kit';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { runLimitReachedNow } from '../../data/run-limits.lookups';
import type { WorkflowDeps } from '../../deps';
import { eligibleOwners } from '../../domain/blockers';
import { OPEN_STAGE_STATES, TERMINAL_STATES } from '../../domain/invocation-states';
import type { StoredOwnerSpawn } from '../../domain/owner-spawn';
import type { RunStage } from '../../generated/prisma/client';
import { currentStage } from './current-stage';
import type { RunIds } from './run-stages';
import { unstartedRunStages } from './run-stages';
import { settleStageOwnerSpawn, spawnStageOwner } from './spawn-stage-owner';
import type { PlannedOwnerSpawn } from './spawn-stage-owner';

const HUB_TIMEOUT_MS = 5_000;

/** What the hub said about the roster: a running agent accepted the stage's handoff, none could, or no answer. */
export type RosterAnswer =
  { kind: 'assigned'; agentId: string; handoffId: string } | { kind: 'none' } | { kind: 'hub' };

/**
 * The hub's answers for giving one stage an owner, gathered before the reconcile's transaction. They hold only
 * for the stage as it was read (`stageId`, `attempts`, `exclude`, `ownerSpawn`): the transaction checks that
 * under the invocation's lock and otherwise asks again.
 */
export interface OwnerPlan {
  stageId: string;
  attempts: number;
  exclude: string[];
  ownerSpawn: string;
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

/** Whether `plan` was made for `stage` as the transaction finds it, with the same agents excluded. */
export function planFits(plan: OwnerPlan | null, stage: RunStage, exclude: string[]): plan is OwnerPlan {
  return (
    plan !== null &&
    plan.stageId === stage.id &&
    plan.attempts === stage.attempts &&
    plan.exclude.join(',') === [...exclude].sort().join(',') &&
    plan.ownerSpawn === JSON.stringify(stage.ownerSpawn ?? null)
  );
}

/** Running roster agents holding the stage's capabilities, least loaded first (then the hub's idle-first order). */
async function candidates(
  deps: WorkflowDeps,
  projectId: string,
  stage: RunStage,
  exclude: string[],
): Promise<string[] | null> {
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  let roster;
  try {
    const res = await deps.hub.GET('/internal/v1/projects/{projectId}/roster', {
      params: { path: { projectId }, query: { capability: needed } },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    roster = res.data?.data;
  } catch (error) {
    deps.logger.warn({ err: error, invocation_id: stage.invocationId }, 'roster read failed');
  }
  if (!roster) return null;
  const running = eligibleOwners(roster, needed, exclude);
  if (running.length === 0) return [];
  const load = await deps.db.runStage.groupBy({
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
    .sort((a, b) => a.rank - b.rank)
    .map((c) => c.agentId);
}

/**
 * Asks the hub for a handoff of the stage to the first candidate it accepts one for. The hub's stage handoffs
 * are idempotent per stage and agent, so asking again (a repeated pass, a plan the transaction set aside)
 * answers the same handoff.
 */
async function handoffFromRoster(
  deps: WorkflowDeps,
  invocation: { id: string; workspaceId: string; projectId: string },
  stage: RunStage,
  exclude: string[],
): Promise<RosterAnswer> {
  const list = await candidates(deps, invocation.projectId, stage, exclude);
  if (list === null) return { kind: 'hub' };
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
    // 409 agent_evicted / 400 assignee_not_found: this agent cannot take work; try the next one.
    if (res.response.status >= 500) return { kind: 'hub' };
  }
  return { kind: 'none' };
}

/**
 * Reads the invocation and its stages without a lock and, when the pass will have to give the current stage an
 * owner, asks the hub everything that takes (roster, handoff, spawn) before the transaction opens: a slow hub
 * then holds no database connection and no row lock. A run not started yet gets its ids here, so its first
 * stage can be named to the hub. Null when the pass needs nothing from the hub.
 */
export async function planReconcile(deps: WorkflowDeps, invocationId: string): Promise<ReconcilePlan | null> {
  const invocation = await deps.db.invocation.findUnique({ where: { id: invocationId } });
  if (!invocation || TERMINAL_STATES.includes(invocation.state as never)) return null;
  const now = deps.now();
  if (invocation.deadlineAt && invocation.deadlineAt.getTime() <= now.getTime()) return null;
  const launching = invocation.state === 'launching';
  if (launching && invocation.approvalRequired && invocation.approvalDecision === null) return null;
  if (!launching && invocation.state !== 'running' && invocation.state !== 'waiting_for_artifact')
    return null;
  let stages = await deps.db.runStage.findMany({ where: { invocationId }, orderBy: { position: 'asc' } });
  let run: RunIds | null = null;
  if (stages.length === 0) {
    if (!launching) return null;
    const template = await loadInvocationTemplate(deps.db, invocation);
    if (!template) return null;
    // A run that will wait for a slot needs nothing from the hub yet.
    if (await runLimitReachedNow(deps.db, invocation.projectId, invocation.workspaceId)) return null;
    run = { runId: newId('run'), stageIds: template.definition.stages.map(() => newId('stg')) };
    stages = unstartedRunStages(invocation, run, template);
  }
  const need = currentStage(stages, now, deps.engine.stallAfterMs);
  if (need.kind !== 'needs_owner') return { run, owner: null };
  const stage = need.current;
  const roster = await handoffFromRoster(deps, invocation, stage, need.exclude);
  const spawn = roster.kind === 'none' ? await spawnStageOwner({ deps, invocation, stage, now }) : null;
  const settled = roster.kind === 'assigned' ? await settleStageOwnerSpawn(deps, stage) : null;
  return {
    run,
    owner: {
      stageId: stage.id,
      attempts: stage.attempts,
      exclude: [...need.exclude].sort(),
      ownerSpawn: JSON.stringify(stage.ownerSpawn ?? null),
      roster,
      spawn,
      settled,
    },
  };
}
