import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Agent } from '../../generated/prisma/client';
import { lockAgent } from '../../data/agents.locks';
import { announceConsoleRoutes } from '../../data/console-routes.notices';
import { announceRosterChanged } from '../../data/roster.notices';
import { agentEvicted, agentNotFound, findAgentFor, findSelfAgent } from '../../data/agents.lookups';
import { AGENT_OPERATOR_ROLES } from '../../domain/roles';

/**
 * Records that an agent stopped locally (spec: local stop command): it becomes `offline` with `stoppedAt`
 * set and keeps its id for a restart. Idempotent: stopping a stopped agent changes nothing. An evicted
 * agent stays evicted. An operator stops an agent by id; an agent stops itself (`'self'`). A stop is announced
 * after the commit (the agent no longer runs on its projects' rosters; decision 105).
 */
export async function stopAgent(
  deps: HubDeps,
  actor: Actor,
  which: { agentId: string } | 'self',
  requestId?: string,
): Promise<Agent> {
  const target =
    which === 'self'
      ? await findSelfAgent(deps, actor)
      : await findAgentFor(deps, actor, which.agentId, AGENT_OPERATOR_ROLES);
  let changed = false;
  const result = await deps.db.$transaction(async (tx) => {
    const agent = await lockAgent(tx, target.id);
    if (!agent) throw agentNotFound(target.id);
    if (agent.status === 'evicted') throw agentEvicted(agent.id, 'be stopped');
    if (agent.status === 'offline') return agent;
    const stopped = await tx.agent.update({
      where: { id: agent.id },
      data: { status: 'offline', stoppedAt: deps.now() },
    });
    await deps.audit.record(
      {
        workspaceId: agent.workspaceId,
        actor,
        action: 'agent.stopped',
        targetType: 'agent',
        targetId: agent.id,
        data: { previous_status: agent.status, by_self: actor.kind === 'agent' },
        requestId,
      },
      tx,
    );
    changed = true;
    return stopped;
  });
  if (changed) {
    await announceConsoleRoutes(deps, result);
    await announceRosterChanged(deps, result.workspaceId);
  }
  return result;
}
