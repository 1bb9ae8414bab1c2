import { AppError } from '@svc/service-kit';
import type { Db } from '../db';

export const memberNotFound = () =>
  new AppError({
    status: 404,
    code: 'member_not_found',
    detail: 'That participant is not a member of this workspace.',
  });

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
