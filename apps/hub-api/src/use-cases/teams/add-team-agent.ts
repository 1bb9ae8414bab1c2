import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { agentEvicted, agentNotFound } from '../../data/agents.lookups';
import { announceRosterChanged } from '../../data/roster.notices';
import { findTeamFor } from '../../data/teams.lookups';
import { TEAM_MANAGER_ROLES } from '../../domain/roles';

/**
 * Adds an agent of the team's workspace to the team. Idempotent: an existing membership is returned as it
 * is. An evicted agent cannot join a team. A new membership is announced after the commit (the rosters of
 * the team's projects change; decision 105).
 */
export async function addTeamAgent(
  deps: HubDeps,
  actor: Actor,
  input: { teamId: string; agentId: string; requestId?: string },
) {
  const team = await findTeamFor(deps, actor, input.teamId, TEAM_MANAGER_ROLES);
  const key = { teamId_agentId: { teamId: team.id, agentId: input.agentId } };
  let added = false;
  const membership = await deps.db.$transaction(async (tx) => {
    const agent = await tx.agent.findFirst({ where: { id: input.agentId, workspaceId: team.workspaceId } });
    if (!agent) throw agentNotFound(input.agentId);
    const existing = await tx.teamAgent.findUnique({ where: key, include: { agent: true } });
    if (existing) return existing;
    if (agent.status === 'evicted') throw agentEvicted(agent.id, 'join a team');
    const { count } = await tx.teamAgent.createMany({
      data: [{ teamId: team.id, agentId: agent.id }],
      skipDuplicates: true,
    });
    if (count === 1) {
      added = true;
      await deps.audit.record(
        {
          workspaceId: team.workspaceId,
          actor,
          action: 'team.agent_added',
          targetType: 'team',
          targetId: team.id,
          data: { agent_id: agent.id, agent_name: agent.name },
          requestId: input.requestId,
        },
        tx,
      );
    }
    return tx.teamAgent.findUniqueOrThrow({ where: key, include: { agent: true } });
  });
  if (added) await announceRosterChanged(deps, team.workspaceId);
  return membership;
}
