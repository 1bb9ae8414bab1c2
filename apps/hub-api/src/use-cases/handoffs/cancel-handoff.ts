import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { handoffNotFound, transitionHandoff } from '../../data/handoffs.lifecycle';
import { COLLABORATOR_ROLES } from '../../domain/roles';
import { assertResourceAccess } from '../../data/resources.access';

/**
 * A participant (owner, admin or member) or a key of the handoff's workspace cancels it; a completed or
 * cancelled handoff cannot be cancelled (409). A handoff of another workspace is not found.
 */
export function cancelHandoff(
  deps: HubDeps,
  actor: Actor,
  handoffId: string,
  requestId?: string,
): Promise<Handoff> {
  const load = async () => {
    const handoff = await deps.db.handoff.findUnique({ where: { id: handoffId } });
    if (!handoff) throw handoffNotFound(handoffId);
    await assertResourceAccess(deps.db, actor, handoff.workspaceId, {
      notFound: () => handoffNotFound(handoffId),
      roles: COLLABORATOR_ROLES,
    });
    return handoff;
  };
  return transitionHandoff(deps, actor, load, 'cancel', { requestId });
}
