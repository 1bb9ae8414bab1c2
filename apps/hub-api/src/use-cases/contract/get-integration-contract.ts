import type { Actor } from '@svc/auth';
import { hubDocument, workflowDocument } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { buildIntegrationContract } from '../../domain/integration-contract';
import type { Workspace } from '../../generated/prisma/client';

/** The merged document depends only on the settings it is served with, so each hub builds it once. */
const built = new WeakMap<HubDeps['settings'], OpenApiDocument>();

/**
 * The integration contract for a workspace API key: the public hub and Workflow API operations as one
 * OpenAPI document, with the key's workspace. Other actors are refused.
 */
export async function getIntegrationContract(
  deps: HubDeps,
  actor: Actor,
): Promise<{ workspace: Workspace; document: OpenApiDocument }> {
  if (actor.kind !== 'api_key')
    throw new AppError({ status: 403, code: 'actor_not_allowed', detail: 'Use a workspace API key.' });
  const workspace = await deps.db.workspace.findUniqueOrThrow({ where: { id: actor.workspaceId } });
  let document = built.get(deps.settings);
  if (!document) {
    document = buildIntegrationContract({
      hub: hubDocument,
      workflow: workflowDocument,
      hubUrl: deps.settings.publicUrl,
      workflowUrl: deps.settings.workflowPublicUrl,
    });
    built.set(deps.settings, document);
  }
  return { workspace, document };
}
