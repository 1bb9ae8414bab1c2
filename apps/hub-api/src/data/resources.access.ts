import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { ParticipantRole } from '@svc/service-kit';
import type { Db } from '../db';

/**
 * Access to a resource addressed by its own id (`/api/v1/teams/{teamId}`), once it has been loaded: an
 * actor that cannot see the resource's workspace gets the resource's not-found error (existence does not
 * leak). When `roles` is given, a participant also needs one of those workspace roles (403
 * `role_forbidden`, like the workspace guard); keys and agents are governed by the scopes the router checked.
 */
export async function assertResourceAccess(
  db: Db,
  actor: Actor | undefined,
  workspaceId: string,
  options: { notFound: () => AppError; roles?: readonly ParticipantRole[] },
): Promise<void> {
  switch (actor?.kind) {
    case 'api_key':
    case 'agent':
      if (actor.workspaceId !== workspaceId) throw options.notFound();
      return;
    case 'participant': {
      const membership = await db.membership.findUnique({
        where: { workspaceId_participantId: { workspaceId, participantId: actor.participantId } },
        select: { role: true },
      });
      if (!membership) throw options.notFound();
      if (options.roles && !options.roles.includes(membership.role)) {
        throw new AppError({
          status: 403,
          code: 'role_forbidden',
          detail: `This action needs one of the workspace roles ${options.roles.join(', ')}; you are ${membership.role}.`,
          extra: { required_roles: options.roles, role: membership.role },
        });
      }
      return;
    }
    default:
      throw options.notFound();
  }
}
