import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { lockAgent } from '../../data/agents.locks';
import { agentEvicted, agentNotFound, findSelfAgent } from '../../data/agents.lookups';
import { RUNNING_AGENT_STATUSES } from '../../domain/host-readiness';
import { issueRuntimeCredential } from './issue-runtime-credential';
import type { RuntimeCredential } from './issue-runtime-credential';

/**
 * A running agent renews its runtime credential before it expires (the current one stays valid until then).
 * The new credential is for the agent's registered model, from the same authorization source order as at
 * start, and is audited as `credential.runtime.refreshed`. Refused for an evicted agent (409 `agent_evicted`;
 * its token is normally refused before this), one that is not running (409 `agent_not_running`: stopped
 * agents get a credential by being started again), one without a model (409 `model_required`) and one whose
 * model has left the catalog (409 `provider_model_unsupported` with `close_matches`). The agent row is locked
 * while the credential is issued, so a stop or eviction in the same moment is either before or after it.
 */
export async function refreshRuntimeCredential(
  deps: HubDeps,
  actor: Actor,
  requestId?: string,
): Promise<RuntimeCredential> {
  const target = await findSelfAgent(deps, actor);
  return deps.db.$transaction(
    async (tx) => {
      const agent = await lockAgent(tx, target.id);
      if (!agent) throw agentNotFound(target.id);
      if (agent.status === 'evicted') throw agentEvicted(agent.id, 'refresh its runtime credential');
      if (!(RUNNING_AGENT_STATUSES as readonly string[]).includes(agent.status)) {
        throw new AppError({
          status: 409,
          code: 'agent_not_running',
          detail: `Agent '${agent.name}' is ${agent.status}; only a running agent refreshes its runtime credential. Start it again to get one.`,
          extra: { current_status: agent.status },
        });
      }
      if (!agent.model) {
        throw new AppError({
          status: 409,
          code: 'model_required',
          detail: `Agent '${agent.name}' has no model; start it with an exact provider/model identifier from the current catalog.`,
        });
      }
      return issueRuntimeCredential(deps, {
        agent,
        model: agent.model,
        event: 'refreshed',
        actor,
        requestId,
      });
    },
    { timeout: 15_000 },
  );
}
