import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Agent, AgentStatus } from '../../generated/prisma/client';
import { lockAgent } from '../../data/agents.locks';
import { agentEvicted, agentNotFound, findSelfAgent } from '../../data/agents.lookups';

export type RunningStatus = Extract<AgentStatus, 'online' | 'idle' | 'busy'>;

/**
 * An agent's heartbeat: refreshes `lastHeartbeatAt` and moves between the running statuses (`online`,
 * `idle`, `busy`). A stopped (`offline`) agent that heartbeats is running again: it becomes the reported
 * status, or `online`. An evicted agent's heartbeat is refused.
 */
export async function recordAgentHeartbeat(
  deps: HubDeps,
  actor: Actor,
  input: { status?: RunningStatus; requestId?: string },
): Promise<Agent> {
  const target = await findSelfAgent(deps, actor);
  return deps.db.$transaction(async (tx) => {
    const agent = await lockAgent(tx, target.id);
    if (!agent) throw agentNotFound(target.id);
    if (agent.status === 'evicted') throw agentEvicted(agent.id, 'heartbeat');
    const status: AgentStatus = input.status ?? (agent.status === 'offline' ? 'online' : agent.status);
    const updated = await tx.agent.update({
      where: { id: agent.id },
      data: { status, lastHeartbeatAt: deps.now() },
    });
    if (agent.status === 'offline') {
      await deps.audit.record(
        {
          workspaceId: agent.workspaceId,
          actor,
          action: 'agent.resumed',
          targetType: 'agent',
          targetId: agent.id,
          data: { status },
          requestId: input.requestId,
        },
        tx,
      );
    }
    return updated;
  });
}
