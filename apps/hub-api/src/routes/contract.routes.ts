import { hubDocument, workflowDocument } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import { buildIntegrationContract } from '../use-cases/build-integration-contract';
import type { HubHandlers } from './types';
import { actorOf } from './types';

export function contractHandlers(deps: HubDeps): HubHandlers<'getIntegrationContract'> {
  let document: OpenApiDocument | undefined;
  return {
    async getIntegrationContract({ actor }) {
      const caller = actorOf(actor);
      if (caller.kind !== 'api_key')
        throw new AppError({ status: 403, code: 'actor_not_allowed', detail: 'Use a workspace API key.' });
      const workspace = await deps.db.workspace.findUniqueOrThrow({ where: { id: caller.workspaceId } });
      document ??= buildIntegrationContract({
        hub: hubDocument,
        workflow: workflowDocument,
        hubUrl: deps.settings.publicUrl,
        workflowUrl: deps.settings.workflowPublicUrl,
      });
      return {
        status: 200,
        body: { data: { workspace: { id: workspace.id, slug: workspace.slug }, openapi: document } },
      };
    },
  };
}
