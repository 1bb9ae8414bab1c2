import type { WorkflowApi } from '@svc/contracts';
import type { Artifact, Invocation } from '../generated/prisma/client';

type Schemas = WorkflowApi.components['schemas'];
export type DeliveryEventType = Schemas['DeliveryEventType'];
type DeliveryEventBody = Schemas['DeliveryEventBody'];

/** The documented body (`DeliveryEventBody` in the contract); its exact text is what is signed. */
export function deliveryBody(
  event: DeliveryEventType,
  invocation: Invocation,
  artifact: Pick<Artifact, 'id' | 'schemaId' | 'schemaName' | 'schemaVersion'> | null,
  at: Date,
): string {
  const body: DeliveryEventBody = {
    type: event,
    timestamp: at.toISOString(),
    data: {
      workspace_id: invocation.workspaceId,
      project_id: invocation.projectId,
      invocation_id: invocation.id,
      state: invocation.state as DeliveryEventBody['data']['state'],
      attention: invocation.attention as DeliveryEventBody['data']['attention'],
      attention_reason: invocation.attentionReason,
      correlation_id: invocation.correlationId,
      ...(event === 'invocation.failed' && invocation.failure
        ? { failure: invocation.failure as DeliveryEventBody['data']['failure'] }
        : {}),
      artifact: artifact
        ? {
            artifact_id: artifact.id,
            schema_id: artifact.schemaId,
            schema_name: artifact.schemaName,
            schema_version: artifact.schemaVersion,
          }
        : null,
    },
  };
  return JSON.stringify(body);
}
