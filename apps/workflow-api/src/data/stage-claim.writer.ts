import type { AgentActor } from '@svc/auth';
import { inPooledTransaction } from '@svc/db-kit';
import type { WorkflowDeps } from '../deps';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { auditEventInsert } from './audit.repository';
import { columnList, fieldsOf, INVOCATION_COLUMNS, RUN_STAGE_COLUMNS } from './row-columns';
import { assertOpen, ownershipError } from './run-stage.ownership';

/**
 * A claim's statements on the pool, named so each connection parses and plans them once: `BEGIN`, the lock
 * with both rows, the writes, `COMMIT` (decision 101).
 *
 * The lock: the stage's invocation `FOR UPDATE` (the lock every writer of a run takes first), then the stage row
 * itself in the same statement, in that order. Locking the stage too is what makes the stage row answered the
 * one current once the invocation's lock is held: a claim that waited behind a reassignment or another claim
 * sees what that one committed (a row read without its lock would be the one of the statement's start). The
 * claim updates the stage anyway, so it holds no lock it would not have held before.
 */
const LOCK_STAGE = {
  name: 'stage_claim_lock',
  text: `
    SELECT ${columnList(INVOCATION_COLUMNS, 'i', 'i_')}, ${columnList(RUN_STAGE_COLUMNS, 's', 's_')}
    FROM run_stages s JOIN invocations i ON i.id = s.invocation_id
    WHERE s.id = $1
    FOR UPDATE OF i FOR NO KEY UPDATE OF s`,
};

/** Where the values of the `stage.claimed` / `stage.resumed` audit event begin in {@link WRITE_CLAIM}. */
const AUDIT_FIRST_PARAMETER = 8;

/**
 * The claim's writes in one statement: the stage `claimed` (its first claim time kept), the invocation's
 * attention raised for the stage cleared when `$5` says so, and the audit event when `$6` says so (a claim of
 * a stage already claimed only refreshes its heartbeat). Answers the stage and, when it was updated, the
 * invocation.
 */
const WRITE_CLAIM = {
  name: 'stage_claim_write',
  text: `
    WITH stage AS (
      UPDATE run_stages s
      SET state = 'claimed', blocker_reason = NULL, last_heartbeat_at = $2::timestamptz,
        claimed_at = CASE WHEN $3::boolean THEN $2::timestamptz ELSE s.claimed_at END
      WHERE s.id = $1
      RETURNING ${columnList(RUN_STAGE_COLUMNS, 's', 's_')}
    ),
    cleared AS (
      UPDATE invocations i
      SET attention = 'none', attention_reason = NULL, blockers = '[]'::jsonb, updated_at = $7::timestamptz
      WHERE i.id = $4 AND $5::boolean
      RETURNING ${columnList(INVOCATION_COLUMNS, 'i', 'i_')}
    ),
    audited AS (
      ${auditEventInsert(AUDIT_FIRST_PARAMETER, '$6::boolean')}
    )
    SELECT * FROM stage LEFT JOIN cleared ON true`,
};

/**
 * `assigned` → `claimed` (a blocked stage resumes); repeating it is harmless. Counts as a heartbeat. Claiming
 * and clearing a blocker are this same step. The ownership and open-state checks are those of every action of
 * a stage's owner ({@link ownershipError}, {@link assertOpen}); an attention raised for the stage (a blocker or
 * a stall) clears as `clearStageAttention` clears it. Answers the rows as committed, without reading
 * them again.
 */
export async function claimOwnedStage(
  deps: Pick<WorkflowDeps, 'pool' | 'audit' | 'now'>,
  actor: AgentActor,
  stageId: string,
): Promise<{ stage: RunStage; invocation: Invocation }> {
  return inPooledTransaction(deps.pool, async (client) => {
    const {
      rows: [locked],
    } = await client.query<Record<string, unknown>>({ ...LOCK_STAGE, values: [stageId] });
    const stage = locked ? fieldsOf<RunStage>(locked, RUN_STAGE_COLUMNS, 's_') : null;
    const error = ownershipError(stage, actor, stageId);
    if (error) throw error;
    const invocation = fieldsOf<Invocation>(locked!, INVOCATION_COLUMNS, 'i_');
    assertOpen(stage!);

    const now = deps.now();
    // What the database would set itself: the invocation's update time and the event's time are the clock's.
    const at = new Date();
    const first = stage!.state === 'assigned';
    const changed = stage!.state !== 'claimed';
    const clear =
      changed &&
      invocation.state === 'running' &&
      (invocation.attention === 'blocked' || invocation.attention === 'stalled');
    const {
      rows: [written],
    } = await client.query<Record<string, unknown>>({
      ...WRITE_CLAIM,
      values: [
        stageId,
        now.toISOString(),
        first,
        invocation.id,
        clear,
        changed,
        at.toISOString(),
        ...deps.audit.statementValues(
          {
            workspaceId: invocation.workspaceId,
            projectId: invocation.projectId,
            actor,
            action: first ? 'stage.claimed' : 'stage.resumed',
            targetType: 'run_stage',
            targetId: stageId,
            data: { invocation_id: invocation.id, stage_key: stage!.key },
          },
          at,
        ),
      ],
    });
    if (!written) throw new Error(`claim of ${stageId}: the stage is gone under its invocation's lock`);
    return {
      stage: fieldsOf<RunStage>(written, RUN_STAGE_COLUMNS, 's_'),
      invocation: clear ? fieldsOf<Invocation>(written, INVOCATION_COLUMNS, 'i_') : invocation,
    };
  });
}
