import type { HubDeps } from '../../deps';
import type { Agent } from '../../generated/prisma/client';

/**
 * The agent's bearer token (`AGENT_TOKEN`): audience `agent`, subject the agent id, with its workspace and
 * runtime host as claims. What the token may do is decided on every request from the agent's current row
 * (an evicted agent's token stops working at once), not from the claims.
 */
export function issueAgentToken(
  deps: HubDeps,
  agent: Pick<Agent, 'id' | 'workspaceId' | 'runtimeInstanceId' | 'name'>,
) {
  return deps.keys.issuer.issue({
    audience: 'agent',
    subject: agent.id,
    ttlSeconds: deps.settings.agentTokenTtlSeconds,
    claims: {
      workspace_id: agent.workspaceId,
      runtime_instance_id: agent.runtimeInstanceId,
      agent_name: agent.name,
    },
  });
}
