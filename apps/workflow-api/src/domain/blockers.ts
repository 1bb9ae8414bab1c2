import type { WorkflowApi } from '@svc/contracts';
import type { RunStage } from '../generated/prisma/client';

/** A typed reason an invocation cannot launch or go on (preflight, launch, a run without a stage owner). */
export type Blocker = WorkflowApi.components['schemas']['InvocationsBlocker'];
/** The spec's five blocker categories, exactly. */
export type BlockerCategory = Blocker['category'];
export type BlockerEffect = WorkflowApi.components['schemas']['InvocationsBlockerEffect'];
export type LaunchOutcome = WorkflowApi.components['schemas']['InvocationsLaunchOutcome'];
/** A blocker before its effect is stated (the effect follows from the category). */
export type BlockerDraft = Omit<Blocker, 'effect'> & { effect?: BlockerEffect };

/**
 * What a blocker does to a launch. Configuration problems refuse it (the run could never start); a missing
 * owner, runtime, spawn-policy or infrastructure problem lets the launch through and the run waits (the engine
 * retries by itself until a running agent can own the stage; a spawn-policy blocker only says why the hub will
 * not spawn that agent).
 */
export function blockerEffect(category: BlockerCategory): BlockerEffect {
  switch (category) {
    case 'roster_ownership':
    case 'runtime_endpoints':
    case 'spawn_policy':
    case 'infrastructure_health':
      return 'waits_for_owner';
    case 'classifier_template_configuration':
      return 'refuses_launch';
  }
}

/** The blocker with its effect (stored blockers written before effects existed get theirs from the category). */
export function withEffect(blocker: BlockerDraft): Blocker {
  return { ...blocker, effect: blockerEffect(blocker.category) };
}

/** What launching does given these blockers: refused, accepted waiting for an owner, or accepted. */
export function launchOutcomeOf(blockers: readonly Blocker[]): LaunchOutcome {
  if (blockers.some((b) => b.effect === 'refuses_launch')) return 'refused';
  return blockers.length > 0 ? 'accepted_waiting_for_owner' : 'accepted';
}

/** A roster entry as the hub's internal roster route gives it (the fields the ownership rule reads). */
export interface RosterAgent {
  agent_id: string;
  running: boolean;
  status: string;
  capabilities: string[];
}

/**
 * The agents that can own a stage needing `needed`: running, not offline, holding every capability, and not
 * one the stage was taken from. Preflight and the engine use this one rule, so preflight never calls a stage
 * ownable that the engine then finds no agent for.
 */
export function eligibleOwners<A extends RosterAgent>(
  roster: readonly A[],
  needed: readonly string[],
  exclude: readonly string[] = [],
): A[] {
  return roster.filter(
    (agent) =>
      agent.running &&
      agent.status !== 'offline' &&
      !exclude.includes(agent.agent_id) &&
      needed.every((c) => agent.capabilities.includes(c)),
  );
}

/** No running roster agent can own the run's current stage (the sweeper retries). */
export function noStageOwnerBlocker(
  stage: Pick<RunStage, 'key' | 'requiredCapabilities'>,
  reason: string,
): Blocker {
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  const what = needed.length > 0 ? `capabilities ${needed.join(', ')}` : 'any capabilities';
  return withEffect({
    category: 'roster_ownership',
    code: 'no_stage_owner',
    stage_key: stage.key,
    message: `No running agent on the project's roster can own stage '${stage.key}' (it needs ${what}); ${reason}.`,
    recommended_action: `Start an agent with ${what} on a team assigned to the project (or registered for it); the stage is assigned as soon as one heartbeats.`,
  });
}

/** The worker could not ask the hub for the roster or a stage handoff (the run resumes by itself). */
export const runHubUnreachable: Blocker = withEffect({
  category: 'infrastructure_health',
  code: 'hub_unreachable',
  message: "The hub could not be asked for the project's roster or to create the stage handoff.",
  recommended_action:
    'Check that the hub is running and reachable from the workflow worker; the run resumes by itself.',
});
