import type { Tx } from '../db';
import type { Invocation } from '../generated/prisma/client';

/** Invocation states after which nothing changes any more. */
export const TERMINAL_STATES = ['completed', 'failed', 'cancelled'] as const;
/** Stage states in which the stage has an owner working (or about to work) on it. */
export const OPEN_STAGE_STATES = ['assigned', 'claimed', 'blocked'] as const;

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

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
