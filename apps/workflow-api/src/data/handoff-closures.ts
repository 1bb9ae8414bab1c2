import type { Tx } from '../db';

/** Why the engine closes a stage's hub handoff (sent to the hub as the cancel reason). */
export type HandoffClosureReason = 'invocation_cancelled' | 'invocation_failed' | 'stage_released';

/**
 * Records, inside the caller's transaction, the hub handoffs of stages that ended or were taken from their owner
 * without them: {@link closeStageHandoffs} cancels them at the hub after the commit, and the sweeper retries
 * until the hub confirms. Stages without a handoff are skipped; recording one twice keeps the first row.
 * Returns how many handoffs were recorded.
 */
export async function recordHandoffClosures(
  tx: Tx,
  stages: readonly { id: string; invocationId: string; handoffId: string | null }[],
  reason: HandoffClosureReason,
): Promise<number> {
  const rows = stages
    .filter((s): s is { id: string; invocationId: string; handoffId: string } => s.handoffId !== null)
    .map((s) => ({ handoffId: s.handoffId, invocationId: s.invocationId, stageId: s.id, reason }));
  if (rows.length === 0) return 0;
  const { count } = await tx.handoffClosure.createMany({ data: rows, skipDuplicates: true });
  return count;
}
