import { getWorkspaceArtifactSchema } from '../../data/artifact-schemas.lookups';
import type { WorkflowDeps } from '../../deps';
import { checkPayload } from '../../domain/artifact-schema-rules';
import type { ArtifactValidatorCache, PayloadVerdict } from '../../domain/artifact-schema-rules';

/**
 * Checks a payload against a schema version of the workspace (deprecated versions included); changes
 * nothing. The version's validator is compiled once and reused from the cache.
 */
export async function validateArtifactPayload(
  deps: WorkflowDeps,
  validators: ArtifactValidatorCache,
  workspaceId: string,
  schemaId: string,
  payload: unknown,
): Promise<PayloadVerdict> {
  const schema = await getWorkspaceArtifactSchema(deps.db, workspaceId, schemaId);
  return checkPayload(validators.get(schema), payload);
}
