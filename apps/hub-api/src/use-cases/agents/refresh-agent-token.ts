import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { agentEvicted, agentNotFound, findSelfAgent } from '../../data/agents.lookups';
import { issueAgentToken } from './issue-agent-token';

/**
 * Issues the calling agent a new AGENT_TOKEN (the current one stays valid until it expires). Refused for an
 * evicted agent. Audited without the token.
 */
export async function refreshAgentToken(deps: HubDeps, actor: Actor, requestId?: string) {
  const target = await findSelfAgent(deps, actor);
  const agent = await deps.db.agent.findUnique({ where: { id: target.id } });
  if (!agent) throw agentNotFound(target.id);
  if (agent.status === 'evicted') throw agentEvicted(agent.id, 'refresh its token');
  const issued = issueAgentToken(deps, agent);
  await deps.audit.record({
    workspaceId: agent.workspaceId,
    actor,
    action: 'credential.agent_token.refreshed',
    targetType: 'agent',
    targetId: agent.id,
    data: { token_id: issued.jti, expires_at: issued.expiresAt.toISOString() },
    requestId,
  });
  return { agent, token: issued.token, expiresAt: issued.expiresAt };
}
