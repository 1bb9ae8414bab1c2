import type { Db } from '../db';
import { artifactSchemaNotFound } from '../domain/errors';
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

/** A schema version of the workspace by id; one of another workspace is reported as not found (404). */
export async function getWorkspaceArtifactSchema(
  db: Pick<Db, 'artifactSchema'>,
  workspaceId: string,
  schemaId: string,
): Promise<ArtifactSchema> {
  const schema = await db.artifactSchema.findUnique({ where: { id: schemaId } });
  if (!schema || schema.workspaceId !== workspaceId) throw artifactSchemaNotFound(schemaId);
  return schema;
}
