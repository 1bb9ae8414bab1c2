import { canonicalJson } from '@svc/contracts';
import { AppError, newId } from '@svc/service-kit';
import type { DbTx } from '../db';
import { templateVersionKey } from '../domain/contract-rules';
import type { ContractRecord } from '../domain/contract-rules';
import { parseTemplateDefinition, templateDefinitionOf } from '../domain/template-definition';
import type { TemplateDefinition, TemplateWire } from '../domain/template-definition';
import type { WorkflowContract } from '../generated/prisma/client';

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
    ...new Map(contracts.map((c) => [templateVersionKey(c.templateKey, c.templateVersion), c])).values(),
  ];
  if (pairs.length === 0) return new Map();
  const rows = await db.workflowTemplate.findMany({
    where: { projectId, OR: pairs.map((c) => ({ key: c.templateKey, version: c.templateVersion })) },
  });
  return new Map(
    rows.map((row) => [templateVersionKey(row.key, row.version), parseTemplateDefinition(row.definition)]),
  );
}

/** One contract with the definition of its template version. */
export async function loadContractRecord(db: DbTx, contract: WorkflowContract): Promise<ContractRecord> {
  const templates = await templatesFor(db, contract.projectId, [contract]);
  return {
    contract,
    definition: templates.get(templateVersionKey(contract.templateKey, contract.templateVersion)),
  };
}
