import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { agentNotFound } from '../../data/agents.lookups';
import { announceRosterChanged } from '../../data/roster.notices';
import { findTeamFor } from '../../data/teams.lookups';
import { TEAM_MANAGER_ROLES } from '../../domain/roles';

/**
 * Removes an agent from a team. Idempotent: removing a non-member changes nothing. A removal is announced
 * after the commit (the rosters of the team's projects change; decision 105).
 */
export async function removeTeamAgent(
  deps: HubDeps,
  actor: Actor,
  input: { teamId: string; agentId: string; requestId?: string },
): Promise<void> {
  const team = await findTeamFor(deps, actor, input.teamId, TEAM_MANAGER_ROLES);
  const removed = await deps.db.$transaction(async (tx) => {
    const agent = await tx.agent.findFirst({
      where: { id: input.agentId, workspaceId: team.workspaceId },
      select: { id: true, name: true },
    });
    if (!agent) throw agentNotFound(input.agentId);
    const { count } = await tx.teamAgent.deleteMany({ where: { teamId: team.id, agentId: agent.id } });
    if (count === 0) return false;
    await deps.audit.record(
      {
        workspaceId: team.workspaceId,
        actor,
        action: 'team.agent_removed',
        targetType: 'team',
        targetId: team.id,
        data: { agent_id: agent.id, agent_name: agent.name },
        requestId: input.requestId,
      },
      tx,
    );
    return true;
  });
  if (removed) await announceRosterChanged(deps, team.workspaceId);
}
