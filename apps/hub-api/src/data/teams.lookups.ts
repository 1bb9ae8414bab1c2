import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { ParticipantRole } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import type { Team } from '../generated/prisma/client';
import { assertResourceAccess } from './resources.access';

export const teamNotFound = (teamId: string) =>
  new AppError({ status: 404, code: 'team_not_found', detail: `No team '${teamId}'.` });

export const participantNotFound = (participantId: string) =>
  new AppError({
    status: 404,
    code: 'participant_not_found',
    detail: `No member '${participantId}' in this team's workspace.`,
  });

/**
 * A team the actor can see (a team of another workspace, or a missing one, is not found); with `roles`, a
 * participant must also hold one of them in the team's workspace.
 */
export async function findTeamFor(
  deps: HubDeps,
  actor: Actor | undefined,
  teamId: string,
  roles?: readonly ParticipantRole[],
): Promise<Team> {
  const team = await deps.db.team.findUnique({ where: { id: teamId } });
  if (!team) throw teamNotFound(teamId);
  await assertResourceAccess(deps.db, actor, team.workspaceId, {
    notFound: () => teamNotFound(teamId),
    roles,
  });
  return team;
}
