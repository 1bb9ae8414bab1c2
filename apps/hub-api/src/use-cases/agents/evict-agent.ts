import type { Actor } from '@svc/auth';
import { announceAgentRevoked } from '../../auth/agent-notices';
import { announceConsoleRoutes } from '../../data/console-routes.notices';
import { announceRosterChanged } from '../../data/roster.notices';
import type { HubDeps } from '../../deps';
import type { Agent } from '../../generated/prisma/client';
import { lockAgent } from '../../data/agents.locks';
import { agentNotFound, findAgentFor } from '../../data/agents.lookups';
import { AGENT_OPERATOR_ROLES } from '../../domain/roles';

/**
 * Evicts an agent's hub identity (spec: evict in control). Final: the agent's token is refused from now on
 * (the credential resolver reads the current row), and it can no longer be started, heartbeat or refresh
 * its token. Nothing is deleted. Idempotent: evicting an evicted agent changes nothing. After the commit a
 * notice tells services that verify agent tokens locally to refuse this agent's (decision 60); an
 * evicted agent is announced again on a repeated eviction, in case the first notice was lost. The rosters of
 * its projects leave it out from then on, which is announced too (decision 105).
 */
export async function evictAgent(
  deps: HubDeps,
  actor: Actor,
  agentId: string,
  requestId?: string,
): Promise<Agent> {
  const target = await findAgentFor(deps, actor, agentId, AGENT_OPERATOR_ROLES);
  const result = await deps.db.$transaction(async (tx) => {
    const agent = await lockAgent(tx, target.id);
    if (!agent) throw agentNotFound(target.id);
    if (agent.status === 'evicted') return agent;
    const evicted = await tx.agent.update({
      where: { id: agent.id },
      data: { status: 'evicted', evictedAt: deps.now() },
    });
    await deps.audit.record(
      {
        workspaceId: agent.workspaceId,
        actor,
        action: 'agent.evicted',
        targetType: 'agent',
        targetId: agent.id,
        data: {
          name: agent.name,
          previous_status: agent.status,
          runtime_instance_id: agent.runtimeInstanceId,
        },
        requestId,
      },
      tx,
    );
    return evicted;
  });
  await announceAgentRevoked(deps, result);
  await announceConsoleRoutes(deps, result);
  await announceRosterChanged(deps, result.workspaceId);
  return result;
}
