import type { HubDeps } from '../deps';

/**
 * Announces that an agent's tokens mean nothing any more (eviction, deletion), after the change is committed:
 * services that verify agent tokens locally (the Workflow API) refuse them within a second instead of at
 * their next check of the agent's standing (decision 60). `tokens_expire_by` is the latest expiry a token
 * issued until now can have, so a deny entry is kept no longer than a token could still be presented.
 */
export function announceAgentRevoked(
  deps: Pick<HubDeps, 'notices' | 'now' | 'settings'>,
  agent: { id: string; workspaceId: string },
): Promise<void> {
  const expireBy = new Date(deps.now().getTime() + deps.settings.agentTokenTtlSeconds * 1000);
  return deps.notices.publish({
    kind: 'agent_revoked',
    agent_id: agent.id,
    workspace_id: agent.workspaceId,
    tokens_expire_by: expireBy.toISOString(),
  });
}
