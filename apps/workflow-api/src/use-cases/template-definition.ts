export { canonicalJson } from '@svc/service-kit';
/** The stored form of a contract's template (the `workflow_templates.definition` column) and its helpers. */

export interface TemplateStage {
  key: string;
  title: string;
  required_capabilities: string[];
}

export interface TemplateDefinition {
  required_capabilities: string[];
  artifact_schema: { name: string; version: string };
  guardrails: { human_approval_required: boolean };
  /** Absent when the caller gave no stages: the template then runs one implicit stage. */
  stages?: TemplateStage[];
}

/** The template as the Workflow API shows it: key and version plus the definition fields. */
export interface TemplateWire extends TemplateDefinition {
  key: string;
  version: string;
}

/** The definition to store: only known fields, in a fixed order; an empty stage list means "no stages". */
export function templateDefinitionOf(template: TemplateWire): TemplateDefinition {
  const definition: TemplateDefinition = {
    required_capabilities: [...template.required_capabilities],
    artifact_schema: { name: template.artifact_schema.name, version: template.artifact_schema.version },
    guardrails: { human_approval_required: template.guardrails.human_approval_required },
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
    guardrails: { human_approval_required: raw.guardrails?.human_approval_required === true },
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
