import { getWorkspaceArtifactSchema } from '../../data/artifact-schemas.lookups';
import type { WorkflowDeps } from '../../deps';
import type { ArtifactSchema } from '../../generated/prisma/client';

/** A schema version of the workspace; one of another workspace is reported as not found. */
export async function getArtifactSchema(
  deps: WorkflowDeps,
  workspaceId: string,
  schemaId: string,
): Promise<ArtifactSchema> {
  return getWorkspaceArtifactSchema(deps.db, workspaceId, schemaId);
}
