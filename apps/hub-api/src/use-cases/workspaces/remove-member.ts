import type { ParticipantActor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { WorkspaceRole } from '../../generated/prisma/client';
import { assertNotLastOwner, memberNotFound } from '../../data/memberships.checks';
import { assertOwnerRules } from '../../domain/member-rules';

export async function removeMember(
  deps: HubDeps,
  actor: ParticipantActor,
  callerRole: WorkspaceRole | undefined,
  workspaceId: string,
  participantId: string,
  requestId?: string,
) {
  await deps.db.$transaction(async (tx) => {
    const key = { workspaceId_participantId: { workspaceId, participantId } };
    const current = await tx.membership.findUnique({ where: key });
    if (!current) throw memberNotFound();
    assertOwnerRules(callerRole, current.role);
    if (current.role === 'owner') await assertNotLastOwner(tx, workspaceId);
    await tx.membership.delete({ where: key });
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'workspace.member_removed',
        targetType: 'participant',
        targetId: participantId,
        data: { role: current.role },
        requestId,
      },
      tx,
    );
  });
  // Services caching memberships drop this one at once (decision 47).
  await deps.notices.publish({
    kind: 'member_changed',
    workspace_id: workspaceId,
    participant_id: participantId,
  });
}
