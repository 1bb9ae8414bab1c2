import type { Tx } from '../db';
import type { Invocation } from '../generated/prisma/client';

/**
 * Locks the invocation row for the rest of the transaction and reads it. Every writer of an invocation's run
 * (reconcile, launch, approval, stage actions, publication) takes this lock first, so they never interleave.
 */
export async function lockInvocation(tx: Tx, invocationId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<
    { id: string }[]
  >`SELECT id FROM invocations WHERE id = ${invocationId} FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.invocation.findUnique({ where: { id: invocationId } });
}

/**
 * {@link lockInvocation} for the invocation of a stage, found in the same statement that locks it; null when no
 * such stage exists.
 */
export async function lockInvocationOfStage(tx: Tx, stageId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT i.id FROM run_stages s JOIN invocations i ON i.id = s.invocation_id
    WHERE s.id = ${stageId} FOR UPDATE OF i`;
  const id = rows[0]?.id;
  return id ? tx.invocation.findUnique({ where: { id } }) : null;
}
