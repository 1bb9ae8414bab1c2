import type { WorkflowApi } from '@svc/contracts';
import { normalizeIntent } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { WorkflowContract } from '../generated/prisma/client';
import type { ClassifierRules } from './contract-matcher';
import { parseTemplateDefinition } from './template-definition';
import type { TemplateDefinition, TemplateWire } from './template-definition';

type Schemas = WorkflowApi.components['schemas'];
/** A classifier as a request carries it (missing parts count as empty). */
export type ClassifierInput = Schemas['ContractsClassifier'];
/** The contract's template as it is shown: `stages` empty when the template runs its implicit stage. */
export type ContractTemplateView = Schemas['ContractsTemplateView'];

/** A contract row with the definition of the template version it names (undefined when none is stored). */
export interface ContractRecord {
  contract: WorkflowContract;
  definition: TemplateDefinition | undefined;
}

/** Map key of a template version. */
export const templateVersionKey = (key: string, version: string) => `${key}\u0000${version}`;

/** Missing parts of a classifier become empty; values are kept as given. */
export function classifierOf(input: ClassifierInput | undefined): ClassifierRules {
  return {
    intentContains: [...(input?.intentContains ?? [])],
    requiredCapabilities: [...(input?.requiredCapabilities ?? [])],
    metadata: { ...(input?.metadata ?? {}) },
  };
}

/** The stored classifier of a contract, every part present. */
export function storedClassifier(contract: Pick<WorkflowContract, 'classifier'>): ClassifierRules {
  return classifierOf((contract.classifier as ClassifierInput | null) ?? undefined);
}

/** The contract's template version with its stored definition (an absent definition reads as empty). */
export function contractTemplate(record: ContractRecord): ContractTemplateView {
  const { contract } = record;
  const def = record.definition ?? parseTemplateDefinition(null);
  return {
    key: contract.templateKey,
    version: contract.templateVersion,
    required_capabilities: def.required_capabilities,
    artifact_schema: def.artifact_schema,
    guardrails: def.guardrails,
    stages: def.stages ?? [],
  };
}

/** The contract rules that JSON Schema cannot state. Throws a 400 AppError naming the broken rule. */
export function checkContractRules(
  classifier: ClassifierRules,
  fallback: boolean,
  template: TemplateWire,
): void {
  const criteria =
    classifier.intentContains.length +
    classifier.requiredCapabilities.length +
    Object.keys(classifier.metadata).length;
  if (fallback && criteria > 0) {
    throw new AppError({
      status: 400,
      code: 'fallback_with_criteria',
      detail: 'A universal fallback matches any intent; send an empty classifier with fallback: true.',
    });
  }
  if (!fallback && criteria === 0) {
    throw new AppError({
      status: 400,
      code: 'classifier_empty',
      detail:
        'A classifier needs at least one intentContains phrase, requiredCapabilities item or metadata key; ' +
        'state fallback: true for a universal fallback.',
    });
  }
  const blank = classifier.intentContains.find((phrase) => normalizeIntent(phrase) === '');
  if (blank !== undefined) {
    throw new AppError({
      status: 400,
      code: 'classifier_phrase_empty',
      detail: 'Every intentContains phrase needs a non-blank character after normalization.',
    });
  }
  const keys = new Set<string>();
  for (const stage of template.stages ?? []) {
    if (keys.has(stage.key)) {
      throw new AppError({
        status: 400,
        code: 'template_stage_duplicate',
        detail: `Stage key '${stage.key}' appears more than once in the template.`,
      });
    }
    keys.add(stage.key);
  }
}
