import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { findTeamFor, participantNotFound } from '../../data/teams.lookups';
import { TEAM_MANAGER_ROLES } from '../../domain/roles';

/**
 * Adds a member of the team's workspace to the team. Idempotent: an existing membership is returned as
 * it is. A participant who is not a member of the workspace is not found.
 */
export async function addTeamParticipant(
  deps: HubDeps,
  actor: Actor,
  input: { teamId: string; participantId: string; requestId?: string },
) {
  const team = await findTeamFor(deps, actor, input.teamId, TEAM_MANAGER_ROLES);
  const key = { teamId_participantId: { teamId: team.id, participantId: input.participantId } };
  return deps.db.$transaction(async (tx) => {
    const membership = await tx.membership.findUnique({
      where: {
        workspaceId_participantId: { workspaceId: team.workspaceId, participantId: input.participantId },
      },
    });
    if (!membership) throw participantNotFound(input.participantId);
    const { count } = await tx.teamParticipant.createMany({
      data: [{ teamId: team.id, participantId: input.participantId }],
      skipDuplicates: true,
    });
    if (count === 1) {
      await deps.audit.record(
        {
          workspaceId: team.workspaceId,
          actor,
          action: 'team.participant_added',
          targetType: 'team',
          targetId: team.id,
          data: { participant_id: input.participantId },
          requestId: input.requestId,
        },
        tx,
      );
    }
    return tx.teamParticipant.findUniqueOrThrow({ where: key, include: { participant: true } });
  });
}
