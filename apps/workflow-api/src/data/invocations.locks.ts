import type { Tx } from '../db';
import type { Invocation } from '../generated/prisma/client';

/** `snake_case` column → `camelCase` field: every field of the Invocation model is its column's camel case. */
const fieldOf = (column: string) => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** A row of `SELECT * FROM invocations` as the model Prisma reads (its values already typed by the driver). */
function invocationOf(row: Record<string, unknown>): Invocation {
  return Object.fromEntries(
    Object.entries(row).map(([column, value]) => [fieldOf(column), value]),
  ) as Invocation;
}

/**
 * Locks the invocation row for the rest of the transaction and reads it, in one statement. Every writer of an
 * invocation's run (reconcile, launch, approval, stage actions, publication) takes this lock first, so they
 * never interleave.
 */
export async function lockInvocation(tx: Tx, invocationId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<
    Record<string, unknown>[]
  >`SELECT * FROM invocations WHERE id = ${invocationId} FOR UPDATE`;
  return rows[0] ? invocationOf(rows[0]) : null;
}

/**
 * {@link lockInvocation} for the invocation of a stage, found in the same statement that locks it; null when no
 * such stage exists.
 */
export async function lockInvocationOfStage(tx: Tx, stageId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<Record<string, unknown>[]>`
    SELECT i.* FROM run_stages s JOIN invocations i ON i.id = s.invocation_id
    WHERE s.id = ${stageId} FOR UPDATE OF i`;
  return rows[0] ? invocationOf(rows[0]) : null;
}
