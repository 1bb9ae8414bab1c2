import type { WorkflowApi } from '@svc/contracts';
import { assistedContractRoute } from '../../data/assist-route.lookups';
import type { WorkflowDeps } from '../../deps';
import type { AssistCaller } from '../assist/suggest-contract';
import { assessLaunchReadiness } from './assess-launch-readiness';
import { resolveIntentAssisted } from './resolve-intent';
import type { ResolveInput } from './resolve-intent';

export type PreflightResult = WorkflowApi.components['schemas']['InvocationsPreflight'];

/**
 * Preflight: resolve plus launch readiness, read-only (it writes no row anywhere, here or in the hub, apart from
 * the budget counter and audit event of a model-assisted resolve, decision 48). The readiness is
 * {@link assessLaunchReadiness}, the very check launch acts on, so `launch_outcome` is what a launch would do
 * now. `can_launch` = no blocker at all (the outcome is `accepted`). When the project allows assisted routing
 * and the model suggested a contract, readiness is that contract's, as an invocation would follow it; `matched`
 * stays the deterministic answer.
 */
export async function preflightIntent(
  deps: WorkflowDeps,
  projectId: string,
  input: ResolveInput,
  caller?: AssistCaller,
): Promise<PreflightResult> {
  const { result: resolved, followContractId } = await resolveIntentAssisted(deps, projectId, input, caller);
  const followed =
    followContractId !== null ? await assistedContractRoute(deps.db, projectId, followContractId) : null;
  const template = followed ? followed.template : resolved.template;
  const contract = followed
    ? {
        contract_id: followed.contractId,
        name: followed.name,
        priority: followed.priority,
        is_fallback: followed.isFallback,
      }
    : resolved.contract;
  const readiness = await assessLaunchReadiness(
    deps,
    projectId,
    { matched: resolved.matched || followed !== null, contractId: contract?.contract_id ?? null, template },
    caller?.project.workspace.id,
  );
  return {
    matched: resolved.matched,
    route_ready: readiness.routeReady,
    can_launch: readiness.outcome === 'accepted',
    launch_outcome: readiness.outcome,
    contract,
    template: template ? { key: template.key, version: template.version, ...template.definition } : null,
    blockers: readiness.blockers,
    explanation: resolved.explanation,
  };
}
