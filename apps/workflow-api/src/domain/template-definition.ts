/** The stored form of a contract's template (the `workflow_templates.definition` column) and its helpers. */
import type { WorkflowApi } from '@svc/contracts';

export type TemplateStage = WorkflowApi.components['schemas']['ContractsTemplateStage'];

/** Guardrails; the failure limits are stored only when the template sets them. */
export interface TemplateGuardrails {
  human_approval_required: boolean;
  /** Failure reports a stage may get before the invocation fails (absent: 0). */
  stage_failure_retries?: number;
  /** Seconds from launch before a run that is not completed fails (absent: none). */
  run_deadline_seconds?: number;
  /** Rejected payloads allowed; one more fails the invocation (absent: no limit). */
  artifact_rejections_allowed?: number;
}

const GUARDRAIL_LIMITS = [
  'stage_failure_retries',
  'run_deadline_seconds',
  'artifact_rejections_allowed',
] as const;

/** The guardrails to store: the approval flag and each limit that is set, in a fixed order. */
function guardrailsOf(
  raw: Partial<Record<keyof TemplateGuardrails, unknown>> | undefined,
): TemplateGuardrails {
  const out: TemplateGuardrails = { human_approval_required: raw?.human_approval_required === true };
  for (const key of GUARDRAIL_LIMITS) {
    const value = raw?.[key];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) out[key] = value;
  }
  return out;
}

export interface TemplateDefinition {
  required_capabilities: string[];
  artifact_schema: { name: string; version: string };
  guardrails: TemplateGuardrails;
  /** Absent when the caller gave no stages: the template then runs one implicit stage. */
  stages?: TemplateStage[];
}

/** The template as a contract request carries it: key and version plus the definition fields. */
export type TemplateWire = WorkflowApi.components['schemas']['ContractsTemplate'];

/** A template as resolve and launch see it: stages always explicit. */
export interface RouteTemplate {
  key: string;
  version: string;
  definition: Required<TemplateDefinition>;
}

/** The definition to store: only known fields, in a fixed order; an empty stage list means "no stages". */
export function templateDefinitionOf(template: TemplateWire): TemplateDefinition {
  const definition: TemplateDefinition = {
    required_capabilities: [...template.required_capabilities],
    artifact_schema: { name: template.artifact_schema.name, version: template.artifact_schema.version },
    guardrails: guardrailsOf(template.guardrails),
  };
  if (template.stages && template.stages.length > 0) {
    definition.stages = template.stages.map((stage) => ({
      key: stage.key,
      title: stage.title,
      required_capabilities: [...stage.required_capabilities],
    }));
  }
  return definition;
}

/** Reads a stored definition defensively (it is JSON from the database). */
export function parseTemplateDefinition(value: unknown): TemplateDefinition {
  const raw = (value ?? {}) as Partial<TemplateDefinition>;
  const strings = (list: unknown): string[] =>
    Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
  const definition: TemplateDefinition = {
    required_capabilities: strings(raw.required_capabilities),
    artifact_schema: {
      name: String(raw.artifact_schema?.name ?? ''),
      version: String(raw.artifact_schema?.version ?? ''),
    },
    guardrails: guardrailsOf(raw.guardrails),
  };
  if (Array.isArray(raw.stages) && raw.stages.length > 0) {
    definition.stages = raw.stages.map((stage) => ({
      key: String(stage.key),
      title: String(stage.title),
      required_capabilities: strings(stage.required_capabilities),
    }));
  }
  return definition;
}

/**
 * The definition an invocation runs: stages made explicit. With no stages the template has one implicit stage
 * `{ key: template key, title: contract name, required_capabilities: template required_capabilities }`.
 */
export function effectiveDefinition(
  key: string,
  definition: TemplateDefinition,
  contractName: string,
): Required<TemplateDefinition> {
  return {
    ...definition,
    stages:
      definition.stages && definition.stages.length > 0
        ? definition.stages
        : [{ key, title: contractName, required_capabilities: [...definition.required_capabilities] }],
  };
}

/** Template problems that keep the route from being ready (required fields, valid stages). */
export function templateProblems(template: RouteTemplate): string[] {
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
