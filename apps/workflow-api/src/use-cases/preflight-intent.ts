import type { WorkflowDeps } from '../deps';
import { findArtifactSchema } from './find-artifact-schema';
import { resolveIntent } from './resolve-intent';
import type { ResolveExplanation, ResolveInput, ResolveResult } from './resolve-intent';

/** The spec's five blocker categories, exactly. */
export type BlockerCategory =
  | 'classifier_template_configuration'
  | 'roster_ownership'
  | 'runtime_endpoints'
  | 'spawn_policy'
  | 'infrastructure_health';

export interface PreflightBlocker {
  category: BlockerCategory;
  code: string;
  message: string;
  recommended_action: string;
  stage_key?: string;
  runtime_instance_ids?: string[];
}

export interface PreflightResult {
  matched: boolean;
  route_ready: boolean;
  can_launch: boolean;
  contract: ResolveResult['contract'];
  template: (NonNullable<ResolveResult['template']>['definition'] & { key: string; version: string }) | null;
  blockers: PreflightBlocker[];
  explanation: ResolveExplanation;
}

const HUB_TIMEOUT_MS = 5_000;

type Template = NonNullable<ResolveResult['template']>;

/** Template problems that keep the route from being ready (required fields, valid stages). */
function templateProblems(template: Template): string[] {
  const problems: string[] = [];
  const { artifact_schema: schema, stages } = template.definition;
  if (!schema.name || !schema.version) problems.push('it names no artifact schema name and version');
  if (stages.length === 0) problems.push('it has no stages');
  const seen = new Set<string>();
  stages.forEach((stage, i) => {
    if (!stage.key || stage.key === 'undefined') problems.push(`stage ${i + 1} has no key`);
    else if (seen.has(stage.key)) problems.push(`stage key '${stage.key}' is used twice`);
    else seen.add(stage.key);
    if (!stage.title || stage.title === 'undefined') problems.push(`stage ${i + 1} has no title`);
  });
  return problems;
}

const hubUnreachable = (what: string): PreflightBlocker => ({
  category: 'infrastructure_health',
  code: 'hub_unreachable',
  message: `The hub could not be asked for the project's ${what}, so launch readiness is unknown.`,
  recommended_action:
    'Check that the hub is running and reachable from the Workflow API, then run preflight again.',
});

async function rosterBlockers(
  deps: WorkflowDeps,
  projectId: string,
  template: Template,
): Promise<PreflightBlocker[]> {
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
  const blockers: PreflightBlocker[] = [];
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

async function runtimeBlockers(deps: WorkflowDeps, projectId: string): Promise<PreflightBlocker[]> {
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
  const blockers: PreflightBlocker[] = [];
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
  } else if (!template) {
    blockers.push({
      category: 'classifier_template_configuration',
      code: 'template_not_found',
      message: `The matched contract '${resolved.contract?.contract_id ?? ''}' has no stored template.`,
      recommended_action: 'Update the contract with a complete template (stages and artifact schema).',
    });
  } else {
    const problems = templateProblems(template);
    if (problems.length > 0) {
      blockers.push({
        category: 'classifier_template_configuration',
        code: 'template_incomplete',
        message: `Template ${template.key}@${template.version} is incomplete: ${problems.join('; ')}.`,
        recommended_action:
          'Publish a new template version with every required field and valid stages, and point the contract at it.',
      });
    } else {
      const { name, version } = template.definition.artifact_schema;
      const schema = await findArtifactSchema(deps, projectId, name, version);
      if (!schema) {
        blockers.push({
          category: 'classifier_template_configuration',
          code: 'artifact_schema_not_registered',
          message: `Artifact schema ${name}@${version} that template ${template.key}@${template.version} pins is not registered in the project.`,
          recommended_action: `Register artifact schema '${name}' version '${version}' for the project (artifact-schemas:write).`,
        });
      } else if (schema.deprecatedAt) {
        blockers.push({
          category: 'classifier_template_configuration',
          code: 'artifact_schema_deprecated',
          message: `Artifact schema ${name}@${version} that template ${template.key}@${template.version} pins is deprecated.`,
          recommended_action:
            'Register a new artifact schema version and publish a template version that pins it.',
        });
      } else {
        routeReady = true;
      }
    }
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
