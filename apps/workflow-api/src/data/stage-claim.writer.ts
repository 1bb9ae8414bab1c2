import type { AgentActor } from '@svc/auth';
import { inPooledTransaction } from '@svc/db-kit';
import type { PoolClient } from 'pg';
import type { WorkflowDeps } from '../deps';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { auditEventsInsert } from './audit.repository';
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

/**
 * An agent's next assigned stages with their invocations, oldest assignment first (as its listing orders them),
 * locked as {@link LOCK_STAGE} locks one: each invocation `FOR UPDATE`, then its stage, in that order. A row
 * another request holds (a claim, a reassignment, a reconcile of the run) is skipped rather than waited for:
 * that stage is left for a later call, and this one claims the next instead of queueing behind it. Each
 * locking clause says `SKIP LOCKED` (each has its own wait policy). An invocation locked for a stage that is
 * then skipped stays locked until this short transaction ends, as a claim's lock would.
 */
const LOCK_NEXT_STAGES = {
  name: 'stage_claim_next_lock',
  text: `
    SELECT ${columnList(INVOCATION_COLUMNS, 'i', 'i_')}, ${columnList(RUN_STAGE_COLUMNS, 's', 's_')}
    FROM run_stages s JOIN invocations i ON i.id = s.invocation_id
    WHERE s.owner_agent_id = $1 AND s.workspace_id = $2 AND s.state = 'assigned'
    ORDER BY s.assigned_at ASC, s.id ASC
    LIMIT $3
    FOR UPDATE OF i SKIP LOCKED FOR NO KEY UPDATE OF s SKIP LOCKED`,
};

/** Where the values of the `stage.claimed` / `stage.resumed` audit events begin in {@link WRITE_CLAIMS}. */
const AUDIT_FIRST_PARAMETER = 7;

/**
 * What a claim writes, for one stage or several in one statement (the arrays `$1`–`$4` hold one element per
 * stage): the stage `claimed` (its first claim time kept), the invocation's attention raised for the stage
 * cleared where `$4` says so, and an audit event per stage whose state changed (a claim of a stage already
 * claimed only refreshes its heartbeat). Answers each stage and, when it was updated, its invocation.
 */
const WRITE_CLAIMS = {
  name: 'stage_claims_write',
  text: `
    WITH claim AS (
      SELECT * FROM unnest($1::text[], $2::boolean[], $3::text[], $4::boolean[])
        AS c(stage_id, first, invocation_id, clear)
    ),
    stage AS (
      UPDATE run_stages s
      SET state = 'claimed', blocker_reason = NULL, last_heartbeat_at = $5::timestamptz,
        claimed_at = CASE WHEN c.first THEN $5::timestamptz ELSE s.claimed_at END
      FROM claim c
      WHERE s.id = c.stage_id
      RETURNING ${columnList(RUN_STAGE_COLUMNS, 's', 's_')}
    ),
    cleared AS (
      UPDATE invocations i
      SET attention = 'none', attention_reason = NULL, blockers = '[]'::jsonb, updated_at = $6::timestamptz
      WHERE i.id IN (SELECT invocation_id FROM claim WHERE clear)
      RETURNING ${columnList(INVOCATION_COLUMNS, 'i', 'i_')}
    ),
    audited AS (
      ${auditEventsInsert(AUDIT_FIRST_PARAMETER)}
    )
    SELECT * FROM stage LEFT JOIN cleared ON cleared."i_id" = stage."s_invocationId"`,
};

/** A stage read under its invocation's lock, to be claimed. */
interface Claimable {
  stage: RunStage;
  invocation: Invocation;
}

/**
 * Claims `claimable` (each stage owned by `actor`, open, read under its invocation's lock) in one statement and
 * answers the rows as committed, in the order given. `assigned` → `claimed` (`stage.claimed`); `blocked` →
 * `claimed` (`stage.resumed`); a stage already claimed only gets its heartbeat. An attention raised for the
 * stage (a blocker or a stall) clears as `clearStageAttention` clears it.
 */
async function writeClaims(
  client: PoolClient,
  deps: Pick<WorkflowDeps, 'audit' | 'now'>,
  actor: AgentActor,
  claimable: Claimable[],
): Promise<Claimable[]> {
  const now = deps.now();
  // What the database would set itself: the invocation's update time and the events' time are the clock's.
  const at = new Date();
  const plans = claimable.map(({ stage, invocation }) => {
    const changed = stage.state !== 'claimed';
    return {
      stage,
      invocation,
      first: stage.state === 'assigned',
      changed,
      clear:
        changed &&
        invocation.state === 'running' &&
        (invocation.attention === 'blocked' || invocation.attention === 'stalled'),
    };
  });
  const events = plans
    .filter((plan) => plan.changed)
    .map(({ stage, invocation, first }) => ({
      workspaceId: invocation.workspaceId,
      projectId: invocation.projectId,
      actor,
      action: first ? 'stage.claimed' : 'stage.resumed',
      targetType: 'run_stage',
      targetId: stage.id,
      data: { invocation_id: invocation.id, stage_key: stage.key },
    }));
  const { rows } = await client.query<Record<string, unknown>>({
    ...WRITE_CLAIMS,
    values: [
      plans.map((plan) => plan.stage.id),
      plans.map((plan) => plan.first),
      plans.map((plan) => plan.invocation.id),
      plans.map((plan) => plan.clear),
      now.toISOString(),
      at.toISOString(),
      ...deps.audit.statementColumns(events, at),
    ],
  });
  const written = new Map(rows.map((row) => [row.s_id as string, row]));
  return plans.map(({ stage, invocation, clear }) => {
    const row = written.get(stage.id);
    if (!row) throw new Error(`claim of ${stage.id}: the stage is gone under its invocation's lock`);
    return {
      stage: fieldsOf<RunStage>(row, RUN_STAGE_COLUMNS, 's_'),
      invocation: clear ? fieldsOf<Invocation>(row, INVOCATION_COLUMNS, 'i_') : invocation,
    };
  });
}

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
    assertOpen(stage!);
    const invocation = fieldsOf<Invocation>(locked!, INVOCATION_COLUMNS, 'i_');
    const [claimed] = await writeClaims(client, deps, actor, [{ stage: stage!, invocation }]);
    return claimed!;
  });
}

/**
 * Claims up to `max` of the caller's `assigned` stages, oldest assignment first, each as {@link claimOwnedStage}
 * claims it, in one transaction of two statements (the locks, the writes); answers the claimed stages in that
 * order (none when none is assigned, or each one assigned is held by another request at that moment).
 */
export async function claimNextOwnedStages(
  deps: Pick<WorkflowDeps, 'pool' | 'audit' | 'now'>,
  actor: AgentActor,
  max: number,
): Promise<Claimable[]> {
  return inPooledTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<Record<string, unknown>>({
      ...LOCK_NEXT_STAGES,
      values: [actor.agentId, actor.workspaceId, max],
    });
    if (rows.length === 0) return [];
    const claimable = rows.map((row) => ({
      stage: fieldsOf<RunStage>(row, RUN_STAGE_COLUMNS, 's_'),
      invocation: fieldsOf<Invocation>(row, INVOCATION_COLUMNS, 'i_'),
    }));
    return writeClaims(client, deps, actor, claimable);
  });
}
