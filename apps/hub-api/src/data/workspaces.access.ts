import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { ParticipantRole } from '@svc/service-kit';
import type { Db } from '../db';
import type { Workspace, WorkspaceRole } from '../generated/prisma/client';

export function findWorkspaceByRef(db: Db, ref: string): Promise<Workspace | null> {
  return /^ws_[0-9a-z]{26}$/.test(ref)
    ? db.workspace.findUnique({ where: { id: ref } })
    : db.workspace.findUnique({ where: { slug: ref } });
}

const forbidden = (ref: string) =>
  new AppError({
    status: 403,
    code: 'workspace_forbidden',
    detail: `You have no access to workspace '${ref}'.`,
  });

/**
 * Decides whether an actor may act in a workspace. API keys and agents belong to exactly one workspace;
 * participants need a membership, and when `roles` is given, one of those roles. A missing workspace and
 * a workspace the actor cannot see look the same (403), so existence does not leak.
 */
export async function assertWorkspaceAccess(
  db: Db,
  actor: Actor | undefined,
  workspace: Workspace | null,
  ref: string,
  roles?: readonly ParticipantRole[],
): Promise<{ workspace: Workspace; role?: WorkspaceRole }> {
  if (!workspace || !actor) throw forbidden(ref);
  switch (actor.kind) {
    case 'api_key':
    case 'agent':
      if (actor.workspaceId !== workspace.id) throw forbidden(ref);
      return { workspace };
    case 'participant': {
      const membership = await db.membership.findUnique({
        where: {
          workspaceId_participantId: { workspaceId: workspace.id, participantId: actor.participantId },
        },
      });
      if (!membership) throw forbidden(ref);
      if (roles && !roles.includes(membership.role)) {
        throw new AppError({
          status: 403,
          code: 'role_forbidden',
          detail: `This action needs one of the workspace roles ${roles.join(', ')}; you are ${membership.role}.`,
          extra: { required_roles: roles, role: membership.role },
        });
      }
      return { workspace, role: membership.role };
    }
    default:
      throw forbidden(ref);
  }
}

/** Access check for a resource found by its own id: anything the actor may not see is reported as not found. */
export async function canSeeWorkspace(
  db: Db,
  actor: Actor | undefined,
  workspaceId: string,
): Promise<boolean> {
  if (!actor) return false;
  if (actor.kind === 'api_key' || actor.kind === 'agent') return actor.workspaceId === workspaceId;
  if (actor.kind !== 'participant') return false;
  const membership = await db.membership.findUnique({
    where: { workspaceId_participantId: { workspaceId, participantId: actor.participantId } },
  });
  return membership !== null;
}
