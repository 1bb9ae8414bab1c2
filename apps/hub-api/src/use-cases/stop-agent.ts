import type { Actor } from '@svc/auth';
import type { HubDeps } from '../deps';
import type { Agent } from '../generated/prisma/client';
import { lockAgent } from './agent-placement';
import { agentEvicted, agentNotFound } from './find-agent';

/**
 * Records that an agent stopped locally (spec: local stop command): it becomes `offline` with `stoppedAt`
 * set and keeps its id for a restart. Idempotent: stopping a stopped agent changes nothing. An evicted
 * agent stays evicted.
 */
export async function stopAgent(
  deps: HubDeps,
  actor: Actor,
  target: Agent,
  requestId?: string,
): Promise<Agent> {
  return deps.db.$transaction(async (tx) => {
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
    return stopped;
  });
}
