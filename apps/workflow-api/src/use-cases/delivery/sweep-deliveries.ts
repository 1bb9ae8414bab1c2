import { dispatchDeliveries } from '../../data/delivery.events';
import type { WorkflowDeps } from '../../deps';

/** Overdue pending deliveries looked at per pass (one query, one Redis round trip). */
export const DELIVERY_SWEEP_BATCH = 2000;

/**
 * Where the sweeper of one process stopped in the overdue deliveries (by next attempt time, then id), so that
 * a backlog larger than a batch is looked at in full over a few passes rather than the same oldest rows every
 * time. Kept in memory only: after a restart the sweeper starts again from the oldest, which is merely slower.
 */
export interface DeliverySweepState {
  cursor: { nextAttemptAt: Date; id: string } | null;
}

export function newDeliverySweepState(): DeliverySweepState {
  return { cursor: null };
}

export interface DeliverySweepResult {
  /** Overdue pending deliveries the queue was asked about. */
  checked: number;
  /** Of those, the ones whose job the queue still holds (left alone). */
  held: number;
  /** Deliveries whose job the queue no longer holds while the row still waits for it: enqueued again. */
  requeued: number;
}

interface OverdueRow {
  id: string;
  next_attempt_at: Date;
}

/**
 * Finds pending deliveries whose job was lost (Redis flushed or failed over, an enqueue that failed, a job
 * dropped after an error) and enqueues them again with the same job id. Postgres says what is owed; the queue
 * is asked whether it still holds each overdue delivery's job, and only the ones it does not hold are
 * re-dispatched. A backlog the workers have not reached yet is therefore never enqueued again, however long it
 * waits. Rows enqueued within `outboxRedeliverMs` are not even asked about.
 *
 * Order matters for exactness: the attempt records its outcome in the row before its job finishes and leaves
 * Redis, so a delivery missing from the queue and still pending in a read made after the queue's answer has
 * really lost its job.
 */
export async function sweepDeliveries(
  deps: WorkflowDeps,
  state: DeliverySweepState,
): Promise<DeliverySweepResult> {
  const cut = new Date(deps.now().getTime() - deps.engine.outboxRedeliverMs);
  const after = state.cursor;
  const { rows } = await deps.pool.query<OverdueRow>(
    `SELECT id, next_attempt_at FROM deliveries
      WHERE status = 'pending' AND next_attempt_at < $1
        AND (enqueued_at IS NULL OR enqueued_at < $1)
        AND ($2::timestamptz IS NULL OR (next_attempt_at, id) > ($2::timestamptz, $3::text))
      ORDER BY next_attempt_at, id
      LIMIT $4`,
    [cut, after?.nextAttemptAt ?? null, after?.id ?? '', DELIVERY_SWEEP_BATCH],
  );
  const last = rows[rows.length - 1];
  // A full batch: continue after it next time; otherwise the end was reached and the next pass starts over.
  state.cursor =
    rows.length === DELIVERY_SWEEP_BATCH && last
      ? { nextAttemptAt: last.next_attempt_at, id: last.id }
      : null;
  if (rows.length === 0) return { checked: 0, held: 0, requeued: 0 };

  const ids = rows.map((row) => row.id);
  let held: Set<string>;
  try {
    held = await deps.deliveries.held(ids);
  } catch (error) {
    // Without the queue's answer nothing is re-dispatched; the next pass asks again.
    deps.logger.warn({ err: error }, 'delivery sweep: the queue could not be asked; retrying next pass');
    return { checked: 0, held: 0, requeued: 0 };
  }
  const missing = ids.filter((id) => !held.has(id));
  let requeued = 0;
  if (missing.length > 0) {
    // Read again after the queue answered: an attempt that finished meanwhile has settled its row.
    const still = await deps.pool.query<{ id: string; invocation_id: string }>(
      `SELECT id, invocation_id FROM deliveries
        WHERE id = ANY($1::text[]) AND status = 'pending' AND next_attempt_at < $2
          AND (enqueued_at IS NULL OR enqueued_at < $2)`,
      [missing, cut],
    );
    const enqueued = await dispatchDeliveries(
      deps.db,
      deps.deliveries,
      still.rows.map((row) => ({
        deliveryId: row.id,
        trigger: 'scheduled' as const,
        invocationId: row.invocation_id,
      })),
    );
    if (enqueued) requeued = still.rows.length;
  }
  deps.sweeperMetrics?.deliveriesChecked(held.size, missing.length);
  return { checked: ids.length, held: held.size, requeued };
}
