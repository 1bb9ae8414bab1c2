import type { Db } from '../db';
import { createBoundedCache } from '../domain/bounded-cache';
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

/** What a run needs of the schema version its template pins: the registered, immutable part of the row. */
export type PinnedArtifactSchema = Pick<ArtifactSchema, 'id' | 'name' | 'version' | 'jsonSchema'>;

/** Registered versions by project, name and version: never changed nor deleted once registered. */
const registered = createBoundedCache<PinnedArtifactSchema>(1000);
const schemaKey = (projectId: string, name: string, version: string) =>
  `${projectId}\u0000${name}\u0000${version}`;

/**
 * The registered schema version a run pins, or null when none is registered; read once per process (a version
 * is immutable). Deprecation is not part of it: launch readiness reads {@link findArtifactSchema}.
 */
export async function findPinnedArtifactSchema(
  db: Pick<Db, 'artifactSchema'>,
  projectId: string,
  name: string,
  version: string,
): Promise<PinnedArtifactSchema | null> {
  const key = schemaKey(projectId, name, version);
  const hit = registered.get(key);
  if (hit) return hit;
  const row = await findArtifactSchema(db, projectId, name, version);
  if (!row) return null;
  const pinned = { id: row.id, name: row.name, version: row.version, jsonSchema: row.jsonSchema };
  registered.set(key, pinned);
  return pinned;
}

/** The registered schema version a run pins when this process has read it already (see above), without a read. */
export function cachedPinnedArtifactSchema(
  projectId: string,
  name: string,
  version: string,
): PinnedArtifactSchema | undefined {
  return registered.get(schemaKey(projectId, name, version));
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
