import type { WorkflowApi } from '@svc/contracts';
import { templateReadiness } from '../../data/route.readiness';
import type { WorkflowDeps } from '../../deps';
import type { Blocker } from '../../domain/blockers';
import { resolveIntent } from './resolve-intent';
import type { ResolvedTemplate, ResolveInput } from './resolve-intent';

export type PreflightResult = WorkflowApi.components['schemas']['InvocationsPreflight'];

const HUB_TIMEOUT_MS = 5_000;

const hubUnreachable = (what: string): Blocker => ({
  category: 'infrastructure_health',
  code: 'hub_unreachable',
  message: `The hub could not be asked for the project's ${what}, so launch readiness is unknown.`,
  recommended_action:
    'Check that the hub is running and reachable from the Workflow API, then run preflight again.',
});

async function rosterBlockers(
  deps: WorkflowDeps,
  projectId: string,
  template: ResolvedTemplate,
): Promise<Blocker[]> {
  let roster;
  try {
    const res = await deps.hub.GET('/internal/v1/projects/{projectId}/roster', {
      params: { path: { projectId } },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    roster = res.data?.data;
  } catch {
    roster = undefined;
  }
  if (!roster) return [hubUnreachable('roster')];
  const blockers: Blocker[] = [];
  for (const stage of template.definition.stages) {
    const needed = [...new Set(stage.required_capabilities)].sort();
    const owner = roster.find((agent) => needed.every((c) => agent.capabilities.includes(c)));
    if (owner) continue;
    const what = needed.length > 0 ? `capabilities ${needed.join(', ')}` : 'any capabilities';
    blockers.push({
      category: 'roster_ownership',
      code: 'no_stage_owner',
      stage_key: stage.key,
      message: `No agent on the project's roster can own stage '${stage.key}' (it needs ${what}).`,
      recommended_action: `Assign a team with an agent that has ${what} to the project, or register such an agent for the project.`,
    });
  }
  return blockers;
}

async function runtimeBlockers(deps: WorkflowDeps, projectId: string): Promise<Blocker[]> {
  let readiness;
  try {
    const res = await deps.hub.GET('/internal/v1/projects/{projectId}/runtime-readiness', {
      params: { path: { projectId } },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    readiness = res.data?.data;
  } catch {
    readiness = undefined;
  }
  if (!readiness) return [hubUnreachable('runtime readiness')];
  if (readiness.ready) return [];
  return readiness.blockers.map((b) => ({
    category: 'runtime_endpoints' as const,
    code: b.code,
    message: b.message,
    recommended_action: b.recommended_action,
    runtime_instance_ids: b.runtime_instance_ids,
  }));
}

/**
 * Preflight: resolve plus launch readiness, read-only (it writes no row anywhere, here or in the hub).
 * `route_ready` = matched, template complete, its artifact schema version registered and not deprecated;
 * `can_launch` = `route_ready` and no blockers. Spawn policy: none can be configured yet, so it never blocks.
 */
export async function preflightIntent(
  deps: WorkflowDeps,
  projectId: string,
  input: ResolveInput,
): Promise<PreflightResult> {
  const resolved = await resolveIntent(deps, projectId, input);
  const blockers: Blocker[] = [];
  const { template } = resolved;
  let routeReady = false;

  if (!resolved.matched) {
    blockers.push({
      category: 'classifier_template_configuration',
      code: 'no_contract_matched',
      message: 'No active workflow contract of the project matches this intent.',
      recommended_action:
        "Create a contract whose classifier matches this intent (or an explicit universal fallback), or check the request's required_capabilities and metadata.",
    });
  } else {
    const readiness = await templateReadiness(
      deps.db,
      projectId,
      template,
      resolved.contract?.contract_id ?? '',
    );
    routeReady = readiness.routeReady;
    blockers.push(...readiness.blockers);
  }
  if (resolved.matched && template) {
    const [roster, runtime] = await Promise.all([
      rosterBlockers(deps, projectId, template),
      runtimeBlockers(deps, projectId),
    ]);
    // Both reads failing is one infrastructure problem, reported once.
    const runtimeOnly = roster.some((b) => b.code === 'hub_unreachable')
      ? runtime.filter((b) => b.code !== 'hub_unreachable')
      : runtime;
    blockers.push(...roster, ...runtimeOnly);
  }

  return {
    matched: resolved.matched,
    route_ready: routeReady,
    can_launch: routeReady && blockers.length === 0,
    contract: resolved.contract,
    template: template ? { key: template.key, version: template.version, ...template.definition } : null,
    blockers,
    explanation: resolved.explanation,
  };
}
