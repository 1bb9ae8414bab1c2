import type { Actor } from '@svc/auth';
import { isUniqueViolation } from '@svc/db-kit';
import { AppError, newId } from '@svc/service-kit';
import type { WorkflowDeps } from '../../deps';
import type { ArtifactSchema } from '../../generated/prisma/client';
import { findArtifactSchema } from '../../data/artifact-schemas.lookups';
import { compileArtifactSchema, schemaHash } from '../../domain/artifact-schema-rules';

export interface RegisterArtifactSchemaInput {
  projectId: string;
  name: string;
  version: string;
  jsonSchema: Record<string, unknown>;
  requestId?: string;
}

const projectNotFound = (projectId: string) =>
  new AppError({ status: 404, code: 'project_not_found', detail: `No project '${projectId}'.` });

/** The same version registered again: identical content is a replay, anything else is refused. */
function replayOrConflict(existing: ArtifactSchema, hash: string): ArtifactSchema {
  if (existing.schemaHash === hash) return existing;
  throw new AppError({
    status: 409,
    code: 'artifact_schema_version_immutable',
    detail: `Version '${existing.version}' of artifact schema '${existing.name}' is already registered with another schema; versions are immutable, register a new version.`,
  });
}

/**
 * Registers a schema version of a project of the workspace. Registering the same (project, name, version)
 * with the same schema (by canonical hash) returns the existing version (`created: false`); with another
 * schema it is refused (409 `artifact_schema_version_immutable`).
 */
export async function registerArtifactSchema(
  deps: WorkflowDeps,
  actor: Actor,
  workspaceId: string,
  input: RegisterArtifactSchemaInput,
): Promise<{ schema: ArtifactSchema; created: boolean }> {
  const project = await deps.projects.find(input.projectId);
  if (!project || project.workspace.id !== workspaceId) throw projectNotFound(input.projectId);
  compileArtifactSchema(input.jsonSchema);
  const hash = schemaHash(input.jsonSchema);

  const existing = await findArtifactSchema(deps.db, project.id, input.name, input.version);
  if (existing) return { schema: replayOrConflict(existing, hash), created: false };

  try {
    const schema = await deps.db.$transaction(async (tx) => {
      const row = await tx.artifactSchema.create({
        data: {
          id: newId('asc'),
          workspaceId,
          projectId: project.id,
          name: input.name,
          version: input.version,
          jsonSchema: input.jsonSchema as object,
          schemaHash: hash,
          createdAt: deps.now(),
        },
      });
      await deps.audit.record(
        {
          workspaceId,
          projectId: project.id,
          actor,
          action: 'artifact_schema.registered',
          targetType: 'artifact_schema',
          targetId: row.id,
          data: { name: row.name, version: row.version, schema_hash: row.schemaHash },
          requestId: input.requestId,
        },
        tx,
      );
      return row;
    });
    return { schema, created: true };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // A concurrent registration of the same version won the race: answer as if it had come first.
    const winner = await findArtifactSchema(deps.db, project.id, input.name, input.version);
    if (!winner) throw error;
    return { schema: replayOrConflict(winner, hash), created: false };
  }
}
