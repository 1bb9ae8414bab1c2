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

/**
 * Metadata keys no JavaScript object can hold as data: assigning `__proto__` sets the prototype instead, so
 * a stored or compiled classifier would silently lose the key and match more than its author asked.
 */
const RESERVED_METADATA_KEYS = new Set(['__proto__']);

/**
 * The metadata criteria of a request: its own properties only, each checked before it is copied (nothing is
 * assigned by `obj[key] = value`, which cannot make `__proto__` an own key). A reserved key is 400
 * `validation_failed`, so it can neither make a classifier look non-empty nor, in a PATCH, replace one.
 */
export function metadataOf(
  input: Record<string, string> | undefined,
  reserved: 'refuse' | 'skip' = 'refuse',
): Record<string, string> {
  const metadata: Record<string, string> = {};
  if (input === undefined) return metadata;
  for (const key of Object.keys(input)) {
    if (RESERVED_METADATA_KEYS.has(key)) {
      if (reserved === 'skip') continue;
      throw new AppError({
        status: 400,
        code: 'validation_failed',
        detail: `body/classifier/metadata/${key} is a reserved key.`,
        extra: { errors: [{ location: `body/classifier/metadata/${key}`, message: 'is a reserved key' }] },
      });
    }
    Object.defineProperty(metadata, key, {
      value: input[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return metadata;
}

/** Missing parts of a classifier become empty; values are kept as given. */
export function classifierOf(
  input: ClassifierInput | undefined,
  reserved: 'refuse' | 'skip' = 'refuse',
): ClassifierRules {
  return {
    intentContains: [...(input?.intentContains ?? [])],
    requiredCapabilities: [...(input?.requiredCapabilities ?? [])],
    metadata: metadataOf(input?.metadata, reserved),
  };
}

/** The stored classifier of a contract, every part present (a reserved metadata key stored earlier is left out). */
export function storedClassifier(contract: Pick<WorkflowContract, 'classifier'>): ClassifierRules {
  return classifierOf((contract.classifier as ClassifierInput | null) ?? undefined, 'skip');
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
    Object.keys(classifier.metadata).filter((key) => !RESERVED_METADATA_KEYS.has(key)).length;
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
