import { AppError } from '@svc/service-kit';
import type { WorkspaceRole } from '../generated/prisma/client';

/** Only owners grant the owner role or change or remove an owner. */
export function assertOwnerRules(
  callerRole: WorkspaceRole | undefined,
  targetRole: WorkspaceRole | undefined,
  newRole?: WorkspaceRole,
) {
  const touchesOwner = targetRole === 'owner' || newRole === 'owner';
  if (touchesOwner && callerRole !== 'owner') {
    throw new AppError({
      status: 403,
      code: 'owner_required',
      detail: 'Only an owner can grant, change or remove the owner role.',
    });
  }
}
