import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { handoffNotFound, transitionHandoff } from '../../data/handoffs.lifecycle';
import { COLLABORATOR_ROLES } from '../../domain/roles';
import { assertResourceAccess } from '../../data/resources.access';

export interface CancelHandoffOptions {
  requestId?: string;
  /** Why it is cancelled; recorded in the audit event. */
  reason?: string;
  /** A handoff that is already cancelled is returned as it is instead of answering 409. */
  idempotent?: boolean;
}

/**
 * A participant (owner, admin or member) or a key of the handoff's workspace cancels it; a completed or
 * cancelled handoff cannot be cancelled (409). A handoff of another workspace is not found. A service (on the
 * internal route) may cancel a handoff of any workspace, and cancels idempotently: a cancelled handoff is
 * returned unchanged, a completed one is still 409 `handoff_invalid_transition`.
 */
export async function cancelHandoff(
  deps: HubDeps,
  actor: Actor,
  handoffId: string,
  options: CancelHandoffOptions = {},
): Promise<Handoff> {
  const load = async () => {
    const handoff = await deps.db.handoff.findUnique({ where: { id: handoffId } });
    if (!handoff) throw handoffNotFound(handoffId);
    if (actor.kind !== 'service') {
      await assertResourceAccess(deps.db, actor, handoff.workspaceId, {
        notFound: () => handoffNotFound(handoffId),
        roles: COLLABORATOR_ROLES,
      });
    }
    return handoff;
  };
  try {
    return await transitionHandoff(deps, actor, load, 'cancel', {
      requestId: options.requestId,
      ...(options.reason !== undefined ? { auditData: { reason: options.reason } } : {}),
    });
  } catch (error) {
    if (
      options.idempotent &&
      error instanceof AppError &&
      error.code === 'handoff_invalid_transition' &&
      error.extra.current_status === 'cancelled'
    ) {
      return load();
    }
    throw error;
  }
}
