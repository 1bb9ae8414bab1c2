import type { Sql } from '../db';
import type { BlockerDraft } from '../domain/blockers';
import { templateProblems } from '../domain/template-definition';
import type { RouteTemplate } from '../domain/template-definition';

/**
 * Classifier/template configuration readiness of a matched route: the template exists and is complete, and
 * the artifact schema version it pins is registered and not deprecated. Preflight and launch use the same
 * rule, so a route preflight calls ready is a route launch accepts.
 */
export async function templateReadiness(
  sql: Sql,
  projectId: string,
  template: RouteTemplate | null,
  contractId: string,
): Promise<{ routeReady: boolean; blockers: BlockerDraft[] }> {
  const blocked = (blocker: Omit<BlockerDraft, 'category'>) => ({
    routeReady: false,
    blockers: [{ category: 'classifier_template_configuration' as const, ...blocker }],
  });
  if (!template) {
    return blocked({
      code: 'template_not_found',
      message: `The matched contract '${contractId}' has no stored template.`,
      recommended_action: 'Update the contract with a complete template (stages and artifact schema).',
    });
  }
  const problems = templateProblems(template);
  if (problems.length > 0) {
    return blocked({
      code: 'template_incomplete',
      message: `Template ${template.key}@${template.version} is incomplete: ${problems.join('; ')}.`,
      recommended_action:
        'Publish a new template version with every required field and valid stages, and point the contract at it.',
    });
  }
  const { name, version } = template.definition.artifact_schema;
  // Whether the version is registered and deprecated: the one part of a registered version that changes, so it
  // is read at every check (one short row, a named statement).
  const [schema] = await sql.rows<{ deprecatedAt: Date | null }>({
    name: 'artifact_schema_deprecation',
    text: `SELECT deprecated_at AS "deprecatedAt" FROM artifact_schemas
      WHERE project_id = $1 AND name = $2 AND version = $3`,
    values: [projectId, name, version],
  });
  if (!schema) {
    return blocked({
      code: 'artifact_schema_not_registered',
      message: `Artifact schema ${name}@${version} that template ${template.key}@${template.version} pins is not registered in the project.`,
      recommended_action: `Register artifact schema '${name}' version '${version}' for the project (artifact-schemas:write).`,
    });
  }
  if (schema.deprecatedAt) {
    return blocked({
      code: 'artifact_schema_deprecated',
      message: `Artifact schema ${name}@${version} that template ${template.key}@${template.version} pins is deprecated.`,
      recommended_action:
        'Register a new artifact schema version and publish a template version that pins it.',
    });
  }
  return { routeReady: true, blockers: [] };
}
