import type { Sql } from '../db';

/** Why the engine closes a stage's hub handoff (sent to the hub as the cancel reason). */
export type HandoffClosureReason = 'invocation_cancelled' | 'invocation_failed' | 'stage_released';

/**
 * Records, inside the caller's transaction, the hub handoffs of stages that ended or were taken from their owner
 * without them: {@link closeStageHandoffs} cancels them at the hub after the commit, and the sweeper retries
 * until the hub confirms. Stages without a handoff are skipped; recording one twice keeps the first row.
 * Returns how many handoffs were recorded.
 */
export async function recordHandoffClosures(
  sql: Sql,
  stages: readonly { id: string; invocationId: string; handoffId: string | null }[],
  reason: HandoffClosureReason,
): Promise<number> {
  const rows = stages
    .filter((s): s is { id: string; invocationId: string; handoffId: string } => s.handoffId !== null)
    .map((s) => ({ handoffId: s.handoffId, invocationId: s.invocationId, stageId: s.id, reason }));
  if (rows.length === 0) return 0;
  const recorded = await sql.rows({
    name: 'handoff_closures_record',
    text: `INSERT INTO handoff_closures (handoff_id, invocation_id, stage_id, reason)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
      ON CONFLICT DO NOTHING RETURNING handoff_id`,
    values: [
      rows.map((r) => r.handoffId),
      rows.map((r) => r.invocationId),
      rows.map((r) => r.stageId),
      rows.map((r) => r.reason),
    ],
  });
  return recorded.length;
}
