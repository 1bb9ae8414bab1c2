import { readSpawnReadiness } from '../../data/owner-spawns.hub';
import { templateReadiness } from '../../data/route.readiness';
import type { WorkflowDeps } from '../../deps';
import { runLimitReachedNow, runLimitReachedUnder } from '../../data/run-limits.lookups';
import { eligibleOwners, launchOutcomeOf, withEffect } from '../../domain/blockers';
import type { Blocker, LaunchOutcome } from '../../domain/blockers';
import { spawnPolicyBlockers } from '../../domain/owner-spawn';
import type { RouteTemplate } from '../../domain/template-definition';
import type { RosterAgent, RuntimeReadiness } from '../../data/hub-reads';
import type { RunLimits } from '../../domain/run-limits';
import { sqlOn } from '../../db';

const hubUnreachable = (what: string): Blocker =>
  withEffect({
    category: 'infrastructure_health',
    code: 'hub_unreachable',
    message: `The hub could not be asked for the project's ${what}, so launch readiness is unknown.`,
    recommended_action:
      'Check that the hub is running and reachable from the Workflow API; a launch is accepted and its run waits until the hub answers.',
  });

const NO_MATCH: Blocker = withEffect({
  category: 'classifier_template_configuration',
  code: 'no_contract_matched',
  message: 'No active workflow contract of the project matches this intent.',
  recommended_action:
    'Create a contract whose classifier matches the intent (or an explicit universal fallback), or pin one with workflow_contract_id, then invoke again with a new Idempotency-Key.',
});

/** How the hub's answers are read: after the call, or the recent answers a process keeps (decision 106). */
interface HubAnswers {
  roster(): Promise<RosterAgent[] | null>;
  runtimeReadiness(): Promise<RuntimeReadiness | null>;
}

function freshAnswers(deps: WorkflowDeps, projectId: string): HubAnswers {
  return {
    roster: () => deps.hubReads.roster(projectId),
    runtimeReadiness: () => deps.hubReads.runtimeReadiness(projectId),
  };
}

/** The answers read after the call, and kept in this process for the next launches' recent yes. */
function recentAnswers(deps: WorkflowDeps, project: { id: string; workspaceId: string }): HubAnswers {
  return {
    roster: () => deps.hubReads.recentRoster(project, undefined, { fresh: true }),
    runtimeReadiness: () => deps.hubReads.recentRuntimeReadiness(project, { fresh: true }),
  };
}

type TemplateStage = RouteTemplate['definition']['stages'][number];

/** The capabilities a stage needs, each once and sorted. */
const neededBy = (stage: TemplateStage) => [...new Set(stage.required_capabilities)].sort();

/** Whether the answers this process keeps show nothing missing: an owner for every stage, a ready runtime. */
function keptYes(deps: WorkflowDeps, projectId: string, template: RouteTemplate): boolean {
  const kept = deps.hubReads.kept({ id: projectId });
  if (!kept?.readiness.ready) return false;
  return template.definition.stages.every((stage) => eligibleOwners(kept.roster, neededBy(stage)).length > 0);
}

async function rosterBlockers(
  deps: WorkflowDeps,
  projectId: string,
  template: RouteTemplate,
  answers: HubAnswers,
) {
  const roster = await answers.roster();
  if (!roster) return [hubUnreachable('roster')];
  const blockers: Blocker[] = [];
  // Stages needing the same capabilities ask the hub once.
  const spawnReadiness = new Map<string, ReturnType<typeof readSpawnReadiness>>();
  for (const stage of template.definition.stages) {
    const needed = neededBy(stage);
    if (eligibleOwners(roster, needed).length > 0) continue;
    const what = needed.length > 0 ? `capabilities ${needed.join(', ')}` : 'any capabilities';
    // Would the hub spawn an owner? Then a launched run asks for one; if not, say why (spawn policy).
    const key = needed.join(',');
    if (!spawnReadiness.has(key)) spawnReadiness.set(key, readSpawnReadiness(deps, projectId, needed));
    const spawn = await spawnReadiness.get(key);
    const spawnWay =
      spawn?.allowed && spawn.runtime_instance_id
        ? ` The project's spawn policy allows one: a launched run asks the hub to spawn it (model ${spawn.model ?? 'of the policy'} on runtime host ${spawn.runtime_instance_id}).`
        : '';
    blockers.push(
      withEffect({
        category: 'roster_ownership',
        code: 'no_stage_owner',
        stage_key: stage.key,
        message: `No running agent on the project's roster can own stage '${stage.key}' (it needs ${what}).${spawnWay}`,
        recommended_action: spawnWay
          ? 'Nothing to do: the run gets its owner by a spawn (or start an agent yourself).'
          : `Start an agent with ${what} on a team assigned to the project (or registered for it); a launched run waits for it.`,
      }),
    );
    if (spawn && !spawn.allowed) blockers.push(...spawnPolicyBlockers(stage.key, spawn));
  }
  return blockers;
}

async function runtimeBlockers(answers: HubAnswers): Promise<Blocker[]> {
  const readiness = await answers.runtimeReadiness();
  if (!readiness) return [hubUnreachable('runtime readiness')];
  if (readiness.ready) return [];
  return readiness.blockers.map((b) =>
    withEffect({
      category: 'runtime_endpoints' as const,
      code: b.code,
      message: b.message,
      recommended_action: b.recommended_action,
      runtime_instance_ids: b.runtime_instance_ids,
    }),
  );
}

export interface LaunchReadiness {
  /** A contract matched, its template is complete and its artifact schema version is usable. */
  routeReady: boolean;
  blockers: Blocker[];
  outcome: LaunchOutcome;
}

/**
 * THE launch readiness check: preflight reports it, launch acts on it. Configuration of the route (match,
 * template, artifact schema) first; when a template is known, the roster (running agents only, the engine's
 * own ownership rule) and the hub's runtime readiness. A stage no roster agent can own is checked against the
 * project's spawn policy: either a launched run will ask the hub to spawn its owner, or the spawn-policy
 * blockers say why not. The outcome follows from the blockers' effects ({@link launchOutcomeOf}).
 */
export async function assessLaunchReadiness(
  deps: WorkflowDeps,
  projectId: string,
  route: { matched: boolean; contractId: string | null; template: RouteTemplate | null },
  workspaceId?: string,
  /**
   * What the caller read already: the run limits of the project and its workspace; and whether the hub's recent
   * answers may stand when they find nothing missing (a launch; preflight always asks after the call).
   */
  known?: { limits: RunLimits; recentHubAnswers?: boolean },
): Promise<LaunchReadiness> {
  const blockers: Blocker[] = [];
  let routeReady = false;
  if (!route.matched) {
    blockers.push(NO_MATCH);
  } else {
    const readiness = await templateReadiness(
      sqlOn(deps.pool),
      projectId,
      route.template,
      route.contractId ?? '',
    );
    routeReady = readiness.routeReady;
    blockers.push(...readiness.blockers.map(withEffect));
  }
  if (route.matched && route.template) {
    const template = route.template;
    const hubBlockers = async (answers: HubAnswers) => {
      const [roster, runtime] = await Promise.all([
        rosterBlockers(deps, projectId, template, answers),
        runtimeBlockers(answers),
      ]);
      // Both reads failing is one infrastructure problem, reported once.
      const runtimeOnly = roster.some((b) => b.code === 'hub_unreachable')
        ? runtime.filter((b) => b.code !== 'hub_unreachable')
        : runtime;
      return [...roster, ...runtimeOnly];
    };
    // A launch trusts the hub's recent answers when they find nothing missing; whatever they find missing is
    // asked again, so an agent started or a host brought up a moment ago is seen (decision 106).
    const project = known?.recentHubAnswers && workspaceId ? { id: projectId, workspaceId } : null;
    if (!project || !keptYes(deps, projectId, template))
      blockers.push(
        ...(await hubBlockers(project ? recentAnswers(deps, project) : freshAnswers(deps, projectId))),
      );
    const limit = known?.limits
      ? await runLimitReachedUnder(sqlOn(deps.pool), known.limits, projectId, workspaceId)
      : await runLimitReachedNow(sqlOn(deps.pool), projectId, workspaceId);
    if (limit) blockers.push(limit);
  }
  return { routeReady, blockers, outcome: launchOutcomeOf(blockers) };
}
