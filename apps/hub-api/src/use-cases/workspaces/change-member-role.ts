import type { ParticipantActor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { WorkspaceRole } from '../../generated/prisma/client';
import { assertNotLastOwner, memberNotFound } from '../../data/memberships.checks';
import { assertOwnerRules } from '../../domain/member-rules';

export async function changeMemberRole(
  deps: HubDeps,
  actor: ParticipantActor,
  callerRole: WorkspaceRole | undefined,
  workspaceId: string,
  participantId: string,
  role: WorkspaceRole,
  requestId?: string,
) {
  const changed = await deps.db.$transaction(async (tx) => {
    const key = { workspaceId_participantId: { workspaceId, participantId } };
    const current = await tx.membership.findUnique({ where: key });
    if (!current) throw memberNotFound();
    assertOwnerRules(callerRole, current.role, role);
    if (current.role === 'owner' && role !== 'owner') await assertNotLastOwner(tx, workspaceId);
    const updated = await tx.membership.update({
      where: key,
      data: { role },
      include: { participant: true },
    });
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'workspace.member_role_changed',
        targetType: 'participant',
        targetId: participantId,
        data: { from: current.role, to: role },
        requestId,
      },
      tx,
    );
    return updated;
  });
  // Services caching memberships drop this one at once (decision 47).
  await deps.notices.publish({
    kind: 'member_changed',
    workspace_id: workspaceId,
    participant_id: participantId,
  });
  return changed;
}
