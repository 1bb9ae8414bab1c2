import { AppError } from '@svc/service-kit';
import type { Db } from '../db';
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

/**
 * A workspace always keeps at least one owner. Call inside the transaction that changes the membership:
 * the workspace row is locked first, so two concurrent demotions cannot both pass the count.
 */
export async function assertNotLastOwner(tx: Pick<Db, 'membership' | '$executeRaw'>, workspaceId: string) {
  await tx.$executeRaw`SELECT 1 FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`;
  const owners = await tx.membership.count({ where: { workspaceId, role: 'owner' } });
  if (owners <= 1) {
    throw new AppError({
      status: 409,
      code: 'last_owner',
      detail: 'A workspace needs at least one owner; add another owner first.',
    });
  }
}
