import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type {
  Agent,
  Participant,
  Project,
  ProjectTeam,
  Team,
  TeamAgent,
  TeamParticipant,
} from '../../generated/prisma/client';

/** A team with its agents, participants and active project assignments, each oldest first. */
export type TeamWithMembers = Team & {
  agents: (TeamAgent & { agent: Agent })[];
  participants: (TeamParticipant & { participant: Participant })[];
  projects: (ProjectTeam & { project: Project })[];
};
import { findTeamFor, teamNotFound } from '../../data/teams.lookups';

/** A team the actor can see, with its agents, participants and active project assignments. */
export async function getTeam(
  deps: HubDeps,
  actor: Actor | undefined,
  teamId: string,
): Promise<TeamWithMembers> {
  await findTeamFor(deps, actor, teamId);
  const team = await deps.db.team.findUnique({
    where: { id: teamId },
    include: {
      agents: { include: { agent: true }, orderBy: [{ createdAt: 'asc' }, { agentId: 'asc' }] },
      participants: {
        include: { participant: true },
        orderBy: [{ createdAt: 'asc' }, { participantId: 'asc' }],
      },
      projects: {
        where: { unassignedAt: null },
        include: { project: true },
        orderBy: [{ assignedAt: 'asc' }, { projectId: 'asc' }],
      },
    },
  });
  if (!team) throw teamNotFound(teamId);
  return team;
}
