import type { HubDeps } from '../deps';
import { getIntegrationContract } from '../use-cases/contract/get-integration-contract';
import type { HubHandlers } from './types';
import { actorOf } from './types';

export function contractHandlers(deps: HubDeps): HubHandlers<'getIntegrationContract'> {
  return {
    async getIntegrationContract({ actor }) {
      const { workspace, document } = await getIntegrationContract(deps, actorOf(actor));
      return {
        status: 200,
        body: { data: { workspace: { id: workspace.id, slug: workspace.slug }, openapi: document } },
      };
    },
  };
}
