import type { Db } from '../db';
import type { ArtifactSchema } from '../generated/prisma/client';

/**
 * The registered artifact schema version (project, name, version), or null when none is registered. A
 * deprecated version is still returned (with `deprecatedAt` set): callers decide whether they accept it. `db`
 * may be a transaction.
 */
export async function findArtifactSchema(
  db: Pick<Db, 'artifactSchema'>,
  projectId: string,
  name: string,
  version: string,
): Promise<ArtifactSchema | null> {
  return db.artifactSchema.findUnique({
    where: { projectId_name_version: { projectId, name, version } },
  });
}
