import type { WorkflowApi } from '@svc/contracts';
import type { ArtifactSchema } from '../generated/prisma/client';

type Schemas = WorkflowApi.components['schemas'];

export function presentArtifactSchemaSummary(schema: ArtifactSchema): Schemas['ArtifactSchemaSummary'] {
  return {
    id: schema.id,
    workspace_id: schema.workspaceId,
    project_id: schema.projectId,
    name: schema.name,
    version: schema.version,
    schema_hash: schema.schemaHash,
    deprecated_at: schema.deprecatedAt ? schema.deprecatedAt.toISOString() : null,
    created_at: schema.createdAt.toISOString(),
  };
}

export function presentArtifactSchemaDetail(schema: ArtifactSchema): Schemas['ArtifactSchemaDetail'] {
  return {
    ...presentArtifactSchemaSummary(schema),
    json_schema: schema.jsonSchema as Record<string, unknown>,
  };
}
