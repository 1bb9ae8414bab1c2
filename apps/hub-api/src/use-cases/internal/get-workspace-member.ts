import type { HubDeps } from '../../deps';
import { memberNotFound } from '../../data/memberships.checks';

/**
 * A participant's membership of a workspace with the participant's email, for another service of the
 * platform that authorizes its own callers by workspace role (service actor: no caller membership check).
 * An unknown workspace, an unknown participant and a removed membership all read as `member_not_found`.
 */
export async function getWorkspaceMember(deps: HubDeps, workspaceId: string, participantId: string) {
  const membership = await deps.db.membership.findUnique({
    where: { workspaceId_participantId: { workspaceId, participantId } },
    select: {
      workspaceId: true,
      participantId: true,
      role: true,
      participant: { select: { email: true } },
    },
  });
  if (!membership) throw memberNotFound();
  return membership;
}

export type WorkspaceMember = Awaited<ReturnType<typeof getWorkspaceMember>>;
