import type { WorkflowDeps } from '../deps';
import type { ArtifactValidatorCache, PayloadError } from './artifact-schema-rules';
import { checkPayload } from './artifact-schema-rules';
import { getArtifactSchema } from './get-artifact-schema';

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
): Promise<{ valid: boolean; errors: PayloadError[] }> {
  const schema = await getArtifactSchema(deps, workspaceId, schemaId);
  return checkPayload(validators.get(schema), payload);
}
