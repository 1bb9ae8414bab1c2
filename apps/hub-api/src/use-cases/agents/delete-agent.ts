import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import { announceAgentRevoked } from '../../auth/agent-notices';
import { announceConsoleRoutes } from '../../data/console-routes.notices';
import type { HubDeps } from '../../deps';
import { lockAgent } from '../../data/agents.locks';
import { agentNotFound, findAgentFor } from '../../data/agents.lookups';
import { AGENT_OPERATOR_ROLES } from '../../domain/roles';

/**
 * Deletes an evicted agent's row once nothing refers to it any more. The hub row is retained while
 * handoffs (assigned or claimed work), evidence or messages reference the agent, so history stays
 * attributable. Workflow runs reference agents only through handoffs, which are checked here. Deleting is
 * announced like the eviction before it (decision 60), so a lost eviction notice is made good here.
 */
export async function deleteAgent(
  deps: HubDeps,
  actor: Actor,
  agentId: string,
  requestId?: string,
): Promise<void> {
  const target = await findAgentFor(deps, actor, agentId, AGENT_OPERATOR_ROLES);
  const deleted = await deps.db.$transaction(async (tx) => {
    const agent = await lockAgent(tx, target.id);
    if (!agent) throw agentNotFound(target.id);
    if (agent.status !== 'evicted') {
      throw new AppError({
        status: 409,
        code: 'agent_not_evicted',
        detail: `Agent '${agent.name}' is ${agent.status}; only an evicted agent can be deleted. Evict it first.`,
        extra: { current_status: agent.status },
      });
    }
    const [handoffs, evidence, messages] = await Promise.all([
      tx.handoff.count({ where: { assigneeAgentId: agent.id } }),
      tx.handoffEvidence.count({ where: { agentId: agent.id } }),
      tx.message.count({
        where: { OR: [{ toAgentId: agent.id }, { fromKind: 'agent', fromId: agent.id }] },
      }),
    ]);
    if (handoffs + evidence + messages > 0) {
      throw new AppError({
        status: 409,
        code: 'agent_referenced',
        detail: `Agent '${agent.name}' is still referenced; the row is kept while runs, handoffs, claims or evidence reference it.`,
        extra: { references: { handoffs, evidence, messages } },
      });
    }
    await tx.agent.delete({ where: { id: agent.id } });
    await deps.audit.record(
      {
        workspaceId: agent.workspaceId,
        actor,
        action: 'agent.deleted',
        targetType: 'agent',
        targetId: agent.id,
        data: { name: agent.name, runtime_instance_id: agent.runtimeInstanceId },
        requestId,
      },
      tx,
    );
    return agent;
  });
  await announceAgentRevoked(deps, deleted);
  await announceConsoleRoutes(deps, deleted);
}
