import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Workspace, WorkspaceRole } from '../../generated/prisma/client';

/** Participants see their memberships; an API key or agent sees its own workspace. */
export async function listWorkspaces(
  deps: HubDeps,
  actor: Actor,
): Promise<{ workspace: Workspace; role?: WorkspaceRole }[]> {
  if (actor.kind === 'participant') {
    const memberships = await deps.db.membership.findMany({
      where: { participantId: actor.participantId },
      include: { workspace: true },
      orderBy: { createdAt: 'asc' },
    });
    return memberships.map((m) => ({ workspace: m.workspace, role: m.role }));
  }
  if (actor.kind === 'api_key' || actor.kind === 'agent') {
    const workspace =
      (actor.kind === 'api_key' ? deps.apiKeys.workspaceOf(actor) : undefined) ??
      (await deps.db.workspace.findUnique({ where: { id: actor.workspaceId } }));
    return workspace ? [{ workspace }] : [];
  }
  return [];
}
