import type { WorkflowApi } from '@svc/contracts';
import type { RunStage } from '../generated/prisma/client';

/** A typed reason an invocation cannot launch or go on (preflight, launch, a run without a stage owner). */
export type Blocker = WorkflowApi.components['schemas']['InvocationsBlocker'];
/** The spec's five blocker categories, exactly. */
export type BlockerCategory = Blocker['category'];

/** No running roster agent can own the run's current stage (the sweeper retries). */
export function noStageOwnerBlocker(
  stage: Pick<RunStage, 'key' | 'requiredCapabilities'>,
  reason: string,
): Blocker {
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  const what = needed.length > 0 ? `capabilities ${needed.join(', ')}` : 'any capabilities';
  return {
    category: 'roster_ownership',
    code: 'no_stage_owner',
    stage_key: stage.key,
    message: `No running agent on the project's roster can own stage '${stage.key}' (it needs ${what}); ${reason}.`,
    recommended_action: `Start an agent with ${what} on a team assigned to the project (or registered for it); the stage is assigned as soon as one heartbeats.`,
  };
}

/** The worker could not ask the hub for the roster or a stage handoff (the run resumes by itself). */
export const runHubUnreachable: Blocker = {
  category: 'infrastructure_health',
  code: 'hub_unreachable',
  message: "The hub could not be asked for the project's roster or to create the stage handoff.",
  recommended_action:
    'Check that the hub is running and reachable from the workflow worker; the run resumes by itself.',
};
