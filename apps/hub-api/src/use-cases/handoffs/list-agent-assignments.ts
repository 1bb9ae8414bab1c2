import type { AgentActor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { FINAL_STATUSES } from '../../domain/handoff-states';

/** The handoffs assigned to the calling agent that are still to do (not completed or cancelled), oldest first. */
export function listAgentAssignments(deps: HubDeps, actor: AgentActor): Promise<Handoff[]> {
  return deps.db.handoff.findMany({
    where: {
      workspaceId: actor.workspaceId,
      assigneeAgentId: actor.agentId,
      status: { notIn: [...FINAL_STATUSES] },
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}
