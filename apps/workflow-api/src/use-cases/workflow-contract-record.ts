import { AppError, newId } from '@svc/service-kit';
import type { Db } from '../db';
import type { WorkflowContract } from '../generated/prisma/client';
import { normalizeIntent } from './contract-matcher';
import type { ClassifierRules } from './contract-matcher';
import { canonicalJson, parseTemplateDefinition, templateDefinitionOf } from './template-definition';
import type { TemplateDefinition, TemplateStage, TemplateWire } from './template-definition';

/** A Prisma client or the client of an interactive transaction. */
export type DbTx = Omit<Db, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

export interface ClassifierInput {
  intentContains?: string[];
  requiredCapabilities?: string[];
  metadata?: Record<string, string>;
}

/** The contract as the Workflow API shows it. */
export interface ContractWire {
  contract_id: string;
  project_id: string;
  name: string;
  priority: number;
  classifier: ClassifierRules;
  fallback: boolean;
  template: TemplateWire & { stages: TemplateStage[] };
  is_active: boolean;
  revision: number;
  created_at: string;
  updated_at: string;
}

export const contractNotFound = (contractId: string) =>
  new AppError({
    status: 404,
    code: 'contract_not_found',
    detail: `No contract '${contractId}' in this project.`,
  });

/** Missing parts of a classifier become empty; values are kept as given. */
export function classifierOf(input: ClassifierInput | undefined): ClassifierRules {
  return {
    intentContains: [...(input?.intentContains ?? [])],
    requiredCapabilities: [...(input?.requiredCapabilities ?? [])],
    metadata: { ...(input?.metadata ?? {}) },
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

interface StoredTemplateRow {
  id: string;
  definition: unknown;
  first_used_at: Date | null;
}

/**
 * Stores the template version a contract names: a new version is inserted, the same definition is reused, a
 * different definition replaces the stored one until an invocation used that version (then 409
 * `template_version_immutable`). Returns whether the stored definition was replaced.
 */
export async function saveTemplateVersion(
  tx: DbTx,
  projectId: string,
  template: TemplateWire,
): Promise<'created' | 'reused' | 'replaced'> {
  const definition = templateDefinitionOf(template);
  const json = JSON.stringify(definition);
  const inserted = await tx.$executeRaw`
    INSERT INTO workflow_templates (id, project_id, key, version, definition)
    VALUES (${newId('wtp')}, ${projectId}, ${template.key}, ${template.version}, ${json}::jsonb)
    ON CONFLICT (project_id, key, version) DO NOTHING`;
  if (inserted === 1) return 'created';
  const rows = await tx.$queryRaw<StoredTemplateRow[]>`
    SELECT id, definition, first_used_at FROM workflow_templates
    WHERE project_id = ${projectId} AND key = ${template.key} AND version = ${template.version}
    FOR UPDATE`;
  const stored = rows[0];
  if (!stored) throw new Error(`template ${template.key}@${template.version} vanished`);
  if (canonicalJson(parseTemplateDefinition(stored.definition)) === canonicalJson(definition))
    return 'reused';
  if (stored.first_used_at) {
    throw new AppError({
      status: 409,
      code: 'template_version_immutable',
      detail:
        `Template '${template.key}' version '${template.version}' has been used by an invocation and cannot ` +
        'change; name a new version.',
    });
  }
  await tx.workflowTemplate.update({ where: { id: stored.id }, data: { definition: definition as object } });
  return 'replaced';
}

/** Stored template definitions by `key\0version` for the given contracts. */
export async function templatesFor(
  db: DbTx,
  projectId: string,
  contracts: Pick<WorkflowContract, 'templateKey' | 'templateVersion'>[],
): Promise<Map<string, TemplateDefinition>> {
  const pairs = [
    ...new Map(contracts.map((c) => [`${c.templateKey}\u0000${c.templateVersion}`, c])).values(),
  ];
  if (pairs.length === 0) return new Map();
  const rows = await db.workflowTemplate.findMany({
    where: { projectId, OR: pairs.map((c) => ({ key: c.templateKey, version: c.templateVersion })) },
  });
  return new Map(
    rows.map((row) => [`${row.key}\u0000${row.version}`, parseTemplateDefinition(row.definition)]),
  );
}

export function presentContract(
  row: WorkflowContract,
  definition: TemplateDefinition | undefined,
): ContractWire {
  const stored = row.classifier as ClassifierInput | null;
  const def = definition ?? parseTemplateDefinition(null);
  return {
    contract_id: row.id,
    project_id: row.projectId,
    name: row.name,
    priority: row.priority,
    classifier: classifierOf(stored ?? undefined),
    fallback: row.isFallback,
    template: {
      key: row.templateKey,
      version: row.templateVersion,
      required_capabilities: def.required_capabilities,
      artifact_schema: def.artifact_schema,
      guardrails: def.guardrails,
      stages: def.stages ?? [],
    },
    is_active: row.isActive,
    revision: row.revision,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Presents one contract with its stored template. */
export async function presentOne(db: DbTx, row: WorkflowContract): Promise<ContractWire> {
  const templates = await templatesFor(db, row.projectId, [row]);
  return presentContract(row, templates.get(`${row.templateKey}\u0000${row.templateVersion}`));
}
