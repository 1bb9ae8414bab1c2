import type { Sql } from '../db';
import { createBoundedCache } from '../domain/bounded-cache';
import type { Invocation } from '../generated/prisma/client';
import { effectiveDefinition, parseTemplateDefinition } from '../domain/template-definition';
import type { RouteTemplate, TemplateDefinition } from '../domain/template-definition';

/** A template version as stored: its definition parsed, stages as listed. */
export interface StoredTemplate {
  key: string;
  version: string;
  definition: TemplateDefinition;
}

/**
 * Template versions an invocation used, by project, key and version. Such a version never changes (a stored
 * definition is replaced only until its first use, and templates are never deleted), so each process reads it
 * once; a version not used yet is read every time.
 */
const usedTemplates = createBoundedCache<StoredTemplate>(1000);
const templateKey = (projectId: string, key: string, version: string) =>
  `${projectId}\u0000${key}\u0000${version}`;

async function storedTemplate(
  sql: Sql,
  projectId: string,
  key: string,
  version: string,
): Promise<StoredTemplate | null> {
  const cacheKey = templateKey(projectId, key, version);
  const hit = usedTemplates.get(cacheKey);
  if (hit) return hit;
  const [row] = await sql.rows<{
    key: string;
    version: string;
    definition: unknown;
    firstUsedAt: Date | null;
  }>({
    name: 'template_version_stored',
    text: `SELECT key, version, definition, first_used_at AS "firstUsedAt" FROM workflow_templates
      WHERE project_id = $1 AND key = $2 AND version = $3`,
    values: [projectId, key, version],
  });
  if (!row) return null;
  const stored = { key: row.key, version: row.version, definition: parseTemplateDefinition(row.definition) };
  if (row.firstUsedAt) usedTemplates.set(cacheKey, stored);
  return stored;
}

/**
 * The template an invocation pinned (stages explicit), or null when its route names none or it is gone. The
 * contract's name, the title of the one stage of a template that lists none, is read only for such a template.
 */
export async function loadInvocationTemplate(
  sql: Sql,
  invocation: Pick<Invocation, 'projectId' | 'contractId' | 'templateKey' | 'templateVersion'>,
): Promise<RouteTemplate | null> {
  if (!invocation.templateKey || !invocation.templateVersion) return null;
  const stored = await storedTemplate(
    sql,
    invocation.projectId,
    invocation.templateKey,
    invocation.templateVersion,
  );
  if (!stored) return null;
  const listsStages = (stored.definition.stages?.length ?? 0) > 0;
  const [contract] =
    !listsStages && invocation.contractId
      ? await sql.rows<{ name: string }>({
          name: 'template_contract_name',
          text: 'SELECT name FROM workflow_contracts WHERE id = $1',
          values: [invocation.contractId],
        })
      : [];
  return {
    key: stored.key,
    version: stored.version,
    definition: effectiveDefinition(stored.key, stored.definition, contract?.name ?? stored.key),
  };
}

/**
 * The stored template an invocation pinned when this process has read it already (a used version never
 * changes), without a read: undefined otherwise. Its definition as stored (stages as listed), for a caller
 * that needs only what the template pins (its artifact schema) and must not wait for another connection.
 */
export function cachedInvocationTemplate(
  invocation: Pick<Invocation, 'projectId' | 'templateKey' | 'templateVersion'>,
): StoredTemplate | undefined {
  if (!invocation.templateKey || !invocation.templateVersion) return undefined;
  return usedTemplates.get(
    templateKey(invocation.projectId, invocation.templateKey, invocation.templateVersion),
  );
}
