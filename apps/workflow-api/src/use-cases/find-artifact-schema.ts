import type { WorkflowDeps } from '../deps';
import type { ArtifactSchema } from '../generated/prisma/client';

/**
 * The registered artifact schema version (project, name, version), or null when none is registered. A
 * deprecated version is still returned (with `deprecatedAt` set): callers decide whether they accept it.
 */
export async function findArtifactSchema(
  deps: WorkflowDeps,
  projectId: string,
  name: string,
  version: string,
): Promise<ArtifactSchema | null> {
  return deps.db.artifactSchema.findUnique({
    where: { projectId_name_version: { projectId, name, version } },
  });
}
