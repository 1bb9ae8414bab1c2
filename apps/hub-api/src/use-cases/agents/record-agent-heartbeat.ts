import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Agent, AgentStatus } from '../../generated/prisma/client';
import { lockAgentPresence } from '../../data/agents.locks';
import { agentEvicted, agentNotFound, selfAgentId } from '../../data/agents.lookups';
import { announceRosterChanged } from '../../data/roster.notices';
import { isRunning } from '../../domain/host-readiness';

export type RunningStatus = Extract<AgentStatus, 'online' | 'idle' | 'busy'>;

/**
 * An agent's heartbeat: refreshes `lastHeartbeatAt` and moves between the running statuses (`online`,
 * `idle`, `busy`). A stopped (`offline`) or `lost` agent that heartbeats is running again: it becomes the
 * reported status, or `online` (a lost agent shows life again: the engine may give it stages again). An
 * evicted agent's heartbeat is refused. A heartbeat that makes the agent running again (it was stopped, lost or
 * silent too long) is announced after the commit, so the engine sees it back at once (decision 105); the
 * others are not (a running agent's fresher heartbeat or idle/busy swap waits for the roster's time limit).
 */
export async function recordAgentHeartbeat(
  deps: HubDeps,
  actor: Actor,
  input: { status?: RunningStatus; requestId?: string },
): Promise<Agent> {
  const agentId = selfAgentId(actor);
  let back = false;
  const result = await deps.db.$transaction(async (tx) => {
    const agent = await lockAgentPresence(tx, agentId);
    if (!agent) throw agentNotFound(agentId);
    if (agent.status === 'evicted') throw agentEvicted(agentId, 'heartbeat');
    const stopped = agent.status === 'offline' || agent.status === 'lost';
    const status: AgentStatus = input.status ?? (stopped ? 'online' : agent.status);
    const now = deps.now();
    back = !isRunning(agent, now);
    const updated = await tx.agent.update({
      where: { id: agentId },
      data: { status, lastHeartbeatAt: now, ...(agent.status === 'lost' ? { lostAt: null } : {}) },
    });
    if (stopped) {
      await deps.audit.record(
        {
          workspaceId: agent.workspaceId,
          actor,
          action: 'agent.resumed',
          targetType: 'agent',
          targetId: agentId,
          data: { status, previous_status: agent.status },
          requestId: input.requestId,
        },
        tx,
      );
    }
    return updated;
  });
  if (back) await announceRosterChanged(deps, result.workspaceId);
  return result;
}
