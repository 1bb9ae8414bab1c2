import type { WorkflowApi } from '@svc/contracts';
import type { Artifact } from '../generated/prisma/client';

export type ArtifactEnvelope = WorkflowApi.components['schemas']['ArtifactEnvelope'];

/** The immutable envelope of a published artifact. */
export function presentEnvelope(artifact: Artifact): ArtifactEnvelope {
  return {
    envelope_version: '1',
    artifact_id: artifact.id,
    workspace_id: artifact.workspaceId,
    project_id: artifact.projectId,
    invocation_id: artifact.invocationId,
    run_id: artifact.runId,
    schema: { schema_id: artifact.schemaId, name: artifact.schemaName, version: artifact.schemaVersion },
    version: artifact.version,
    summary: artifact.summary,
    payload: artifact.payload,
    payload_sha256: artifact.payloadHash,
    provenance: artifact.provenance as ArtifactEnvelope['provenance'],
    limitations: (artifact.limitations as string[]) ?? [],
    created_by: { kind: artifact.createdByKind as 'api_key' | 'agent', id: artifact.createdById },
    created_at: artifact.createdAt.toISOString(),
  };
}
