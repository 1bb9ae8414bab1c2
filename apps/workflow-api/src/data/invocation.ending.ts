import type { Actor } from '@svc/auth';
import type { Sql } from '../db';
import type { WorkflowDeps } from '../deps';
import type { InvocationCancellation, InvocationFailure } from '../domain/invocation-ending';
import { OPEN_STAGE_STATES } from '../domain/invocation-states';
import type { Invocation } from '../generated/prisma/client';
import { recordDeliveryEvent } from './delivery.events';
import type { DeliveryJob } from './delivery.queue';
import { recordHandoffClosures } from './handoff-closures';
import { columnList, INVOCATION_COLUMNS } from './row-columns';

export type Ending =
  | { state: 'cancelled'; cancellation: InvocationCancellation }
  | { state: 'failed'; failure: InvocationFailure; failedStageId?: string };

/**
 * The ending in one statement: the failed stage (`$2`, when one failed) is `failed`, the other open stages are
 * closed (`$3`), stages not reached are `skipped`, the run ends (`$6`) and the invocation takes its final state,
 * attention and record (`$9` cancellation or `$10` failure). Answers the invocation as updated.
 */
const END_INVOCATION = `
  WITH stages AS (
    UPDATE run_stages SET
      state = CASE WHEN id = $2 THEN 'failed' WHEN state = ANY($4::text[]) THEN $3 ELSE 'skipped' END,
      completed_at = CASE WHEN id = $2 OR state = ANY($4::text[]) THEN $5::timestamptz ELSE completed_at END
    WHERE invocation_id = $1 AND (id = $2 OR state = ANY($4::text[]) OR state = 'pending')
    RETURNING id
  ),
  run AS (
    UPDATE workflow_runs SET state = $6, ended_at = $5::timestamptz
    WHERE invocation_id = $1 AND ended_at IS NULL
    RETURNING id
  )
  UPDATE invocations i SET
    state = CASE WHEN $9::jsonb IS NULL THEN 'failed' ELSE 'cancelled' END,
    completed_at = $5::timestamptz, attention = $7, attention_reason = $8, blockers = '[]'::jsonb,
    cancellation = COALESCE($9::jsonb, i.cancellation), failure = COALESCE($10::jsonb, i.failure),
    updated_at = $5::timestamptz
  WHERE i.id = $1
  RETURNING ${columnList(INVOCATION_COLUMNS, 'i')}`;

/**
 * Ends an invocation as `cancelled` or `failed` inside the caller's transaction (the invocation row locked):
 * open stages are closed (`cancelled`, or `failed`), stages not reached are `skipped`, owners are released (a
 * closed stage is nobody's open stage any more), the run ends, the event is audited and its delivery recorded.
 * The hub handoffs of the closed stages are recorded to be cancelled at the hub: after the commit the caller
 * runs `closeInvocationHandoffs` (the sweeper retries what the hub did not confirm).
 * Returns the updated invocation and the delivery jobs to enqueue after the commit.
 */
export async function endInvocation(
  deps: WorkflowDeps,
  sql: Sql,
  invocation: Invocation,
  ending: Ending,
  actor: Actor,
  now: Date,
  requestId?: string,
): Promise<{ invocation: Invocation; deliveryJobs: DeliveryJob[] }> {
  const closed = ending.state === 'cancelled' ? 'cancelled' : 'failed';
  const failedStageId = ending.state === 'failed' ? (ending.failedStageId ?? null) : null;
  const closing = await sql.rows<{ id: string; invocationId: string; handoffId: string | null }>({
    name: 'invocation_end_handoffs',
    text: `SELECT id, invocation_id AS "invocationId", handoff_id AS "handoffId" FROM run_stages
      WHERE invocation_id = $1 AND handoff_id IS NOT NULL AND (state = ANY($2::text[]) OR id = $3)`,
    values: [invocation.id, [...OPEN_STAGE_STATES], failedStageId],
  });
  await recordHandoffClosures(sql, closing, `invocation_${closed}`);
  const rows = await sql.rows<Invocation>({
    name: 'invocation_end',
    text: END_INVOCATION,
    values: [
      invocation.id,
      failedStageId,
      closed,
      [...OPEN_STAGE_STATES],
      now.toISOString(),
      ending.state === 'cancelled' ? 'cancelled' : 'ended',
      ending.state === 'cancelled' ? 'none' : 'failed',
      ending.state === 'cancelled' ? null : ending.failure.message,
      ending.state === 'cancelled' ? JSON.stringify(ending.cancellation) : null,
      ending.state === 'failed' ? JSON.stringify(ending.failure) : null,
    ],
  });
  const updated = rows[0]!;
  await deps.audit.recordOn(
    sql,
    [
      {
        workspaceId: invocation.workspaceId,
        projectId: invocation.projectId,
        actor,
        action: `invocation.${ending.state}`,
        targetType: 'invocation',
        targetId: invocation.id,
        data:
          ending.state === 'cancelled'
            ? { from_state: invocation.state, reason: ending.cancellation.reason }
            : {
                from_state: invocation.state,
                reason: ending.failure.reason,
                stage_key: ending.failure.stage_key,
              },
        ...(requestId ? { requestId } : {}),
      },
    ],
    now,
  );
  const deliveryJobs = await recordDeliveryEvent(sql, updated, `invocation.${ending.state}`, null, now);
  return { invocation: updated, deliveryJobs };
}
