import { AppError } from '@svc/service-kit';
import type { WorkflowDeps } from '../deps';
import type { ArtifactSchema } from '../generated/prisma/client';

export const artifactSchemaNotFound = (schemaId: string) =>
  new AppError({
    status: 404,
    code: 'artifact_schema_not_found',
    detail: `No artifact schema '${schemaId}'.`,
  });

/** A schema version of the workspace; one of another workspace is reported as not found. */
export async function getArtifactSchema(
  deps: WorkflowDeps,
  workspaceId: string,
  schemaId: string,
): Promise<ArtifactSchema> {
  const schema = await deps.db.artifactSchema.findUnique({ where: { id: schemaId } });
  if (!schema || schema.workspaceId !== workspaceId) throw artifactSchemaNotFound(schemaId);
  return schema;
}
