import type { WorkflowApi } from '@svc/contracts';
import { assessLaunchReadiness } from '../../data/launch.readiness';
import type { WorkflowDeps } from '../../deps';
import { resolveIntent } from './resolve-intent';
import type { ResolveInput } from './resolve-intent';

export type PreflightResult = WorkflowApi.components['schemas']['InvocationsPreflight'];

/**
 * Preflight: resolve plus launch readiness, read-only (it writes no row anywhere, here or in the hub). The
 * readiness is {@link assessLaunchReadiness}, the very check launch acts on, so `launch_outcome` is what a launch
 * would do now. `can_launch` = no blocker at all (the outcome is `accepted`).
 */
export async function preflightIntent(
  deps: WorkflowDeps,
  projectId: string,
  input: ResolveInput,
): Promise<PreflightResult> {
  const resolved = await resolveIntent(deps, projectId, input);
  const { template } = resolved;
  const readiness = await assessLaunchReadiness(deps, projectId, {
    matched: resolved.matched,
    contractId: resolved.contract?.contract_id ?? null,
    template,
  });
  return {
    matched: resolved.matched,
    route_ready: readiness.routeReady,
    can_launch: readiness.outcome === 'accepted',
    launch_outcome: readiness.outcome,
    contract: resolved.contract,
    template: template ? { key: template.key, version: template.version, ...template.definition } : null,
    blockers: readiness.blockers,
    explanation: resolved.explanation,
  };
}
