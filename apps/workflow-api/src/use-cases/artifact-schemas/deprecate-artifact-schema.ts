import type { Actor } from '@svc/auth';
import type { WorkflowDeps } from '../../deps';
import { artifactSchemaNotFound } from '../../domain/errors';
import type { ArtifactSchema } from '../../generated/prisma/client';

/**
 * Deprecates a schema version of the workspace. Idempotent: an already deprecated version is returned
 * unchanged, with its first `deprecatedAt`, and audited once only. Nothing ever clears `deprecatedAt`.
 */
export async function deprecateArtifactSchema(
  deps: WorkflowDeps,
  actor: Actor,
  workspaceId: string,
  schemaId: string,
  requestId?: string,
): Promise<ArtifactSchema> {
  return deps.db.$transaction(async (tx) => {
    const schema = await tx.artifactSchema.findUnique({ where: { id: schemaId } });
    if (!schema || schema.workspaceId !== workspaceId) throw artifactSchemaNotFound(schemaId);
    if (schema.deprecatedAt) return schema;
    const changed = await tx.artifactSchema.updateMany({
      where: { id: schema.id, deprecatedAt: null },
      data: { deprecatedAt: deps.now() },
    });
    if (changed.count === 1) {
      await deps.audit.record(
        {
          workspaceId,
          projectId: schema.projectId,
          actor,
          action: 'artifact_schema.deprecated',
          targetType: 'artifact_schema',
          targetId: schema.id,
          data: { name: schema.name, version: schema.version },
          requestId,
        },
        tx,
      );
    }
    return tx.artifactSchema.findUniqueOrThrow({ where: { id: schema.id } });
  });
}
