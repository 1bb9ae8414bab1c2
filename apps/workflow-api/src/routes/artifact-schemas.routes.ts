import type { WorkflowDeps } from '../deps';
import type { ArtifactSchema } from '../generated/prisma/client';
import { createArtifactValidatorCache } from '../use-cases/artifact-schema-rules';
import type { ArtifactValidatorCache } from '../use-cases/artifact-schema-rules';
import { deprecateArtifactSchema } from '../use-cases/deprecate-artifact-schema';
import { getArtifactSchema } from '../use-cases/get-artifact-schema';
import { listArtifactSchemas } from '../use-cases/list-artifact-schemas';
import { registerArtifactSchema } from '../use-cases/register-artifact-schema';
import { validateArtifactPayload } from '../use-cases/validate-artifact-payload';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

function presentSummary(schema: ArtifactSchema) {
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

function presentDetail(schema: ArtifactSchema) {
  return { ...presentSummary(schema), json_schema: schema.jsonSchema as Record<string, unknown> };
}

/** Register, inspect, validate against and deprecate artifact schema versions (no restore exists). */
export function artifactSchemaHandlers(
  deps: WorkflowDeps,
  validators: ArtifactValidatorCache = createArtifactValidatorCache(),
): WorkflowHandlers<
  | 'listArtifactSchemas'
  | 'registerArtifactSchema'
  | 'getArtifactSchema'
  | 'validateArtifactPayload'
  | 'deprecateArtifactSchema'
> {
  return {
    async listArtifactSchemas(ctx) {
      const page = await listArtifactSchemas(deps, ctx.params.workspaceId, {
        projectId: ctx.query.project_id,
        name: ctx.query.name,
        version: ctx.query.version,
        limit: ctx.query.limit ?? 50,
        cursor: ctx.query.cursor,
      });
      return {
        status: 200,
        body: { data: page.items.map(presentSummary), next_cursor: page.nextCursor },
      };
    },
    async registerArtifactSchema(ctx) {
      const { schema, created } = await registerArtifactSchema(
        deps,
        actorOf(ctx.actor),
        ctx.params.workspaceId,
        {
          projectId: ctx.body.project_id,
          name: ctx.body.name,
          version: ctx.body.version,
          jsonSchema: ctx.body.json_schema,
          requestId: ctx.requestId,
        },
      );
      return { status: created ? 201 : 200, body: { data: presentDetail(schema) } };
    },
    async getArtifactSchema(ctx) {
      const schema = await getArtifactSchema(deps, ctx.params.workspaceId, ctx.params.schemaId);
      return { status: 200, body: { data: presentDetail(schema) } };
    },
    async validateArtifactPayload(ctx) {
      const verdict = await validateArtifactPayload(
        deps,
        validators,
        ctx.params.workspaceId,
        ctx.params.schemaId,
        ctx.body.payload,
      );
      return { status: 200, body: { data: verdict } };
    },
    async deprecateArtifactSchema(ctx) {
      const schema = await deprecateArtifactSchema(
        deps,
        actorOf(ctx.actor),
        ctx.params.workspaceId,
        ctx.params.schemaId,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentDetail(schema) } };
    },
  };
}
