import type { Db } from '../db';
import type { BlockerDraft } from '../domain/blockers';
import { templateProblems } from '../domain/template-definition';
import type { RouteTemplate } from '../domain/template-definition';
import type { ArtifactSchema } from '../generated/prisma/client';
import { findArtifactSchema } from './artifact-schemas.lookups';

/**
 * Classifier/template configuration readiness of a matched route: the template exists and is complete, and
 * the artifact schema version it pins is registered and not deprecated. Preflight and launch use the same
 * rule, so a route preflight calls ready is a route launch accepts.
 */
export async function templateReadiness(
  db: Pick<Db, 'artifactSchema'>,
  projectId: string,
  template: RouteTemplate | null,
  contractId: string,
): Promise<{ routeReady: boolean; blockers: BlockerDraft[]; schema: ArtifactSchema | null }> {
  const blocked = (blocker: Omit<BlockerDraft, 'category'>) => ({
    routeReady: false,
    schema: null,
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
  const schema = await findArtifactSchema(db, projectId, name, version);
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
  return { routeReady: true, blockers: [], schema };
}
