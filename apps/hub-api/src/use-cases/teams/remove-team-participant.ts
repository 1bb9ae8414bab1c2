import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { participantNotFound } from '../../data/teams.lookups';
import { findTeamFor } from '../../data/teams.lookups';
import { TEAM_MANAGER_ROLES } from '../../domain/roles';

/**
 * Removes a participant from a team. Idempotent: removing a non-member changes nothing. A participant who
 * is neither on the team nor a member of its workspace is not found.
 */
export async function removeTeamParticipant(
  deps: HubDeps,
  actor: Actor,
  input: { teamId: string; participantId: string; requestId?: string },
): Promise<void> {
  const team = await findTeamFor(deps, actor, input.teamId, TEAM_MANAGER_ROLES);
  await deps.db.$transaction(async (tx) => {
    const { count } = await tx.teamParticipant.deleteMany({
      where: { teamId: team.id, participantId: input.participantId },
    });
    if (count === 0) {
      const membership = await tx.membership.findUnique({
        where: {
          workspaceId_participantId: { workspaceId: team.workspaceId, participantId: input.participantId },
        },
        select: { role: true },
      });
      if (!membership) throw participantNotFound(input.participantId);
      return;
    }
    await deps.audit.record(
      {
        workspaceId: team.workspaceId,
        actor,
        action: 'team.participant_removed',
        targetType: 'team',
        targetId: team.id,
        data: { participant_id: input.participantId },
        requestId: input.requestId,
      },
      tx,
    );
  });
}
