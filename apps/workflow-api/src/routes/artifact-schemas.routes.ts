import type { WorkflowDeps } from '../deps';
import { createArtifactValidatorCache } from '../domain/artifact-schema-rules';
import type { ArtifactValidatorCache } from '../domain/artifact-schema-rules';
import { presentArtifactSchemaDetail, presentArtifactSchemaSummary } from '../presenters/artifact-schemas';
import { deprecateArtifactSchema } from '../use-cases/artifact-schemas/deprecate-artifact-schema';
import { getArtifactSchema } from '../use-cases/artifact-schemas/get-artifact-schema';
import { listArtifactSchemas } from '../use-cases/artifact-schemas/list-artifact-schemas';
import { registerArtifactSchema } from '../use-cases/artifact-schemas/register-artifact-schema';
import { validateArtifactPayload } from '../use-cases/artifact-schemas/validate-artifact-payload';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

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
        body: { data: page.items.map(presentArtifactSchemaSummary), next_cursor: page.nextCursor },
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
      return { status: created ? 201 : 200, body: { data: presentArtifactSchemaDetail(schema) } };
    },
    async getArtifactSchema(ctx) {
      const schema = await getArtifactSchema(deps, ctx.params.workspaceId, ctx.params.schemaId);
      return { status: 200, body: { data: presentArtifactSchemaDetail(schema) } };
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
      return { status: 200, body: { data: presentArtifactSchemaDetail(schema) } };
    },
  };
}
