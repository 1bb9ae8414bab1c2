import { poolCounts } from '@svc/db-kit';
import { AppError } from '@svc/service-kit';
import { createWorkflowDatabase } from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { createWorkflowAudit } from '../src/data/audit.repository';
import { lockInvocation } from '../src/data/invocations.locks';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import type { WorkflowDeps } from '../src/deps';
import { claimNextStages } from '../src/use-cases/stages/claim-next-stages';
import { claimStage } from '../src/use-cases/stages/claim-stage';
import { heartbeatStage } from '../src/use-cases/stages/heartbeat-stage';
import { listMyStages } from '../src/use-cases/stages/list-my-stages';
import type { AssignmentWaiter } from '../src/use-cases/stages/list-my-stages';
import { agentActor, invocationRow } from './support/invocations-fixtures';

/**
 * An agent's claim of a stage and its listing of its stages, each a few statements of its own on the pool: the
 * claim answers what the listing then answers for the stage (every field typed as Prisma reads it), its checks
 * and its audit event are those of every owner's action, and under the invocation's lock it sees what the
 * writer it waited for committed (another claim, a reassignment) without a deadlock. A heartbeat is one
 * statement that answers the stage with its invocation.
 */
jest.setTimeout(60_000);

let testDb: TestDatabase;
let database: Database;
let deps: WorkflowDeps;
const noWaiter = {} as AssignmentWaiter;

const agent = (agentId: string, workspaceId = 'wks_1') => agentActor(agentId, workspaceId);

beforeAll(async () => {
  testDb = await createWorkflowDatabase();
  database = createDatabase(testDb.url, { poolSize: 4 });
  const db = database.prisma;
  deps = {
    db,
    pool: database.pool,
    audit: createWorkflowAudit(db),
    now: () => new Date(),
  } as unknown as WorkflowDeps;
  await db.workflowTemplate.create({
    data: {
      id: 'wft_1',
      projectId: 'prj_1',
      key: 'flow-1',
      version: '1.0.0',
      definition: {
        required_capabilities: [],
        artifact_schema: { name: 'report', version: '1.0.0' },
        guardrails: { human_approval_required: false },
        stages: [
          { key: 'collect', title: 'Collect', required_capabilities: [] },
          { key: 'write', title: 'Write', required_capabilities: [] },
        ],
      },
      firstUsedAt: new Date('2026-11-29T05:00:00.000Z'),
    },
  });
  await db.artifactSchema.create({
    data: {
      id: 'ars_1',
      workspaceId: 'wks_1',
      projectId: 'prj_1',
      name: 'report',
      version: '1.0.0',
      jsonSchema: { type: 'object', required: ['title'] },
      schemaHash: 'h'.repeat(64),
    },
  });
});

afterAll(async () => {
  await database?.close();
  await testDb?.drop();
});

/** A running invocation with a run of two stages, the first assigned to `owner` (attention raised for it). */
async function seedRun(id: string, owner: string, attention = 'stalled'): Promise<string> {
  const db = database.prisma;
  const at = new Date('2026-11-29T05:10:00.123Z');
  await db.invocation.create({
    data: invocationRow(id, {
      request: { intent: 'report', inputs: { nested: [1, null, 'x'] } },
      intent: 'Write the report',
      contractId: 'wfc_1',
      templateKey: 'flow-1',
      templateVersion: '1.0.0',
      route: { matched: true },
      state: 'running',
      attention,
      attentionReason: attention === 'none' ? null : 'the owner stopped heartbeating',
      blockers: attention === 'none' ? [] : [{ code: 'stage_stalled', stage_key: 'collect' }],
      createdById: 'key_1',
      keyExpiresAt: new Date(at.getTime() + 86_400_000),
      launchedAt: at,
      deadlineAt: new Date(at.getTime() + 3_600_000),
    }),
  });
  await db.workflowRun.create({
    data: { id: `run_${id}`, invocationId: id, workspaceId: 'wks_1', projectId: 'prj_1', startedAt: at },
  });
  for (const [position, key] of [
    [1, 'collect'],
    [2, 'write'],
  ] as const) {
    await db.runStage.create({
      data: {
        id: `stg_${id}_${position}`,
        runId: `run_${id}`,
        invocationId: id,
        workspaceId: 'wks_1',
        position,
        key,
        title: key,
        requiredCapabilities: ['report'],
        ...(position === 1
          ? {
              state: 'assigned',
              ownerAgentId: owner,
              handoffId: 'hof_1',
              stalledAgentIds: ['agt_gone'],
              stalledAt: { agt_gone: at.toISOString() },
              attempts: 2,
              firstAssignedAt: at,
              assignedAt: new Date(at.getTime() + 1),
            }
          : {}),
      },
    });
  }
  return `stg_${id}_1`;
}

/** The statements the pool sent while `fn` ran. */
async function statementsOf(fn: () => Promise<unknown>): Promise<number> {
  const before = poolCounts(database.pool)!.statements;
  await fn();
  return poolCounts(database.pool)!.statements - before;
}

const auditOf = (stageId: string) =>
  database.prisma.auditEvent.findMany({ where: { targetId: stageId }, orderBy: { createdAt: 'asc' } });

async function problemOf(promise: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error('expected a problem');
}

describe('claiming a stage', () => {
  test('when an agent claims its stage, then the answer equals what its listing answers next and Prisma reads, in 4 statements (a listing in 1)', async () => {
    const stageId = await seedRun('inv_claim1', 'agt_a');
    // The template and schema caches are warm after a first listing, as in a running service.
    expect((await listMyStages(deps, noWaiter, agent('agt_a'), 0)).map((r) => r.stage.id)).toEqual([stageId]);

    let claimed!: Awaited<ReturnType<typeof claimStage>>;
    expect(
      await statementsOf(async () => {
        claimed = await claimStage(deps, agent('agt_a'), stageId);
      }),
    ).toBe(4);
    let listed!: Awaited<ReturnType<typeof listMyStages>>;
    expect(
      await statementsOf(async () => {
        listed = await listMyStages(deps, noWaiter, agent('agt_a'), 0);
      }),
    ).toBe(1);
    expect(listed).toHaveLength(1);
    expect(claimed).toStrictEqual(listed[0]);

    const stage = await database.prisma.runStage.findUnique({ where: { id: stageId } });
    const invocation = await database.prisma.invocation.findUnique({ where: { id: 'inv_claim1' } });
    expect(claimed.stage).toStrictEqual(stage);
    expect(claimed.invocation).toStrictEqual(invocation);
    expect(claimed).toMatchObject({
      stage: { state: 'claimed', blockerReason: null, attempts: 2, stalledAgentIds: ['agt_gone'] },
      invocation: { attention: 'none', attentionReason: null, blockers: [] },
      stageCount: 2,
      artifactSchema: {
        name: 'report',
        version: '1.0.0',
        jsonSchema: { type: 'object', required: ['title'] },
      },
    });
    expect(claimed.stage.claimedAt).toBeInstanceOf(Date);
    expect(claimed.stage.claimedAt).toStrictEqual(claimed.stage.lastHeartbeatAt);

    const events = await auditOf(stageId);
    expect(events.map((e) => [e.action, e.actorKind, e.actorId, e.projectId, e.targetType, e.data])).toEqual([
      [
        'stage.claimed',
        'agent',
        'agt_a',
        'prj_1',
        'run_stage',
        { invocation_id: 'inv_claim1', stage_key: 'collect' },
      ],
    ]);
  });

  test('when a claimed stage is claimed again, then only its heartbeat moves: no event, its claim time kept', async () => {
    const stageId = await seedRun('inv_claim2', 'agt_a', 'none');
    const first = await claimStage(deps, agent('agt_a'), stageId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await claimStage(deps, agent('agt_a'), stageId);
    expect(again.stage.claimedAt).toStrictEqual(first.stage.claimedAt);
    expect(again.stage.lastHeartbeatAt!.getTime()).toBeGreaterThan(first.stage.lastHeartbeatAt!.getTime());
    expect(again.invocation).toStrictEqual(first.invocation);
    expect((await auditOf(stageId)).map((e) => e.action)).toEqual(['stage.claimed']);
  });

  test('when a blocked stage is claimed, then it resumes: its blocker is gone, the attention clears, one `stage.resumed`', async () => {
    const stageId = await seedRun('inv_claim3', 'agt_a', 'blocked');
    await database.prisma.runStage.update({
      where: { id: stageId },
      data: { state: 'blocked', blockerReason: 'no access', claimedAt: new Date('2026-11-29T05:20:00.000Z') },
    });
    const resumed = await claimStage(deps, agent('agt_a'), stageId);
    expect(resumed.stage).toMatchObject({
      state: 'claimed',
      blockerReason: null,
      claimedAt: new Date('2026-11-29T05:20:00.000Z'),
    });
    expect(resumed.invocation).toStrictEqual(
      await database.prisma.invocation.findUnique({ where: { id: 'inv_claim3' } }),
    );
    expect(resumed.invocation.attention).toBe('none');
    expect((await auditOf(stageId)).map((e) => e.action)).toEqual(['stage.resumed']);
  });

  test('when the caller may not claim, then the problem is the one of every owner action and nothing is written', async () => {
    const stageId = await seedRun('inv_claim4', 'agt_a');
    expect(await problemOf(claimStage(deps, agent('agt_a'), 'stg_unknown'))).toEqual({
      status: 404,
      code: 'stage_not_found',
    });
    expect(await problemOf(claimStage(deps, agent('agt_a', 'wks_other'), stageId))).toEqual({
      status: 404,
      code: 'stage_not_found',
    });
    expect(await problemOf(claimStage(deps, agent('agt_b'), stageId))).toEqual({
      status: 403,
      code: 'stage_not_owned',
    });
    expect(await problemOf(claimStage(deps, agent('agt_gone'), stageId))).toEqual({
      status: 409,
      code: 'stage_reassigned',
    });
    await database.prisma.runStage.update({ where: { id: stageId }, data: { state: 'completed' } });
    expect(await problemOf(claimStage(deps, agent('agt_a'), stageId))).toEqual({
      status: 409,
      code: 'stage_completed',
    });
    await database.prisma.runStage.update({ where: { id: stageId }, data: { state: 'failed' } });
    expect(await problemOf(claimStage(deps, agent('agt_a'), stageId))).toEqual({
      status: 409,
      code: 'stage_not_open',
    });
    expect(await auditOf(stageId)).toEqual([]);
    const invocation = await database.prisma.invocation.findUnique({ where: { id: 'inv_claim4' } });
    expect(invocation?.attention).toBe('stalled');
  });
});

/** Holds the invocation's lock while `during` runs `fn` (which may wait for it), then lets go. */
async function whileLocked<T>(
  invocationId: string,
  fn: () => Promise<T>,
  during: (
    tx: Parameters<Parameters<Database['prisma']['$transaction']>[0]>[0],
  ) => Promise<void> = async () => undefined,
): Promise<T> {
  let waiting!: Promise<T>;
  await database.prisma.$transaction(async (tx) => {
    await lockInvocation(tx, invocationId);
    waiting = fn();
    waiting.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await during(tx);
  });
  return waiting;
}

describe('claims under the invocation’s lock', () => {
  test('when two claims of a stage wait for the lock, then both answer the claimed stage and one event is recorded', async () => {
    const stageId = await seedRun('inv_claim5', 'agt_a');
    const [one, two] = await whileLocked('inv_claim5', () =>
      Promise.all([claimStage(deps, agent('agt_a'), stageId), claimStage(deps, agent('agt_a'), stageId)]),
    );
    expect(one.stage.state).toBe('claimed');
    expect(two.stage.state).toBe('claimed');
    expect(two.stage.claimedAt).toStrictEqual(one.stage.claimedAt);
    expect((await auditOf(stageId)).map((e) => e.action)).toEqual(['stage.claimed']);
  });

  test('when a claim waits behind a reassignment of its stage, then it sees the reassignment (409 stage_reassigned)', async () => {
    const stageId = await seedRun('inv_claim6', 'agt_a');
    const problem = await whileLocked(
      'inv_claim6',
      () => problemOf(claimStage(deps, agent('agt_a'), stageId)),
      async (tx) => {
        await tx.runStage.update({
          where: { id: stageId },
          data: { ownerAgentId: 'agt_b', stalledAgentIds: ['agt_gone', 'agt_a'], assignedAt: new Date() },
        });
      },
    );
    expect(problem).toEqual({ status: 409, code: 'stage_reassigned' });
    expect(await auditOf(stageId)).toEqual([]);
  });

  test('when claims and reassignments of a stage run together, then none deadlocks', async () => {
    const stageId = await seedRun('inv_claim7', 'agt_a');
    // A reassignment as the engine writes it: the invocation's lock, then the stage.
    const reassign = () =>
      database.prisma.$transaction(async (tx) => {
        await lockInvocation(tx, 'inv_claim7');
        await tx.runStage.update({
          where: { id: stageId },
          data: { state: 'assigned', ownerAgentId: 'agt_a', assignedAt: new Date() },
        });
        await tx.invocation.update({ where: { id: 'inv_claim7' }, data: { attention: 'stalled' } });
      });
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i += 1) {
      work.push(claimStage(deps, agent('agt_a'), stageId), reassign());
    }
    const outcomes = await Promise.allSettled(work);
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    const claims = await auditOf(stageId);
    expect(claims.length).toBeGreaterThanOrEqual(1);
  });
});

describe('claiming the next stages', () => {
  /** Seeds a run whose first stage is assigned to `owner` at `assignedAt`. */
  async function seedAssigned(id: string, owner: string, assignedAt: string): Promise<string> {
    const stageId = await seedRun(id, owner);
    await database.prisma.runStage.update({
      where: { id: stageId },
      data: { assignedAt: new Date(assignedAt) },
    });
    return stageId;
  }
  const noWait = { waitSeconds: 0 };

  test('when an agent claims its next stages, then the oldest assigned ones up to `max` are claimed as a claim claims them, in 4 statements', async () => {
    const newest = await seedAssigned('inv_next1', 'agt_n', '2026-11-29T05:30:00.000Z');
    const oldest = await seedAssigned('inv_next2', 'agt_n', '2026-11-29T05:10:00.000Z');
    const middle = await seedAssigned('inv_next3', 'agt_n', '2026-11-29T05:20:00.000Z');
    // Neither another agent's stage nor one this agent already claimed is taken.
    const others = await seedAssigned('inv_next4', 'agt_other', '2026-11-29T05:00:00.000Z');
    const held = await seedAssigned('inv_next5', 'agt_n', '2026-11-29T05:00:00.000Z');
    await claimStage(deps, agent('agt_n'), held);

    let claimed!: Awaited<ReturnType<typeof claimNextStages>>;
    expect(
      await statementsOf(async () => {
        claimed = await claimNextStages(deps, noWaiter, agent('agt_n'), { ...noWait, max: 2 });
      }),
    ).toBe(4);
    expect(claimed.map((r) => r.stage.id)).toEqual([oldest, middle]);
    // Each answer is what the listing answers for the stage next, and what a single claim would have written.
    const listed = await listMyStages(deps, noWaiter, agent('agt_n'), 0);
    expect(listed.map((r) => r.stage.id)).toEqual([held, oldest, middle, newest]);
    expect(claimed).toStrictEqual(listed.slice(1, 3));
    for (const record of claimed) {
      expect(record).toMatchObject({
        stage: { state: 'claimed', blockerReason: null, attempts: 2 },
        invocation: { attention: 'none', attentionReason: null, blockers: [] },
        stageCount: 2,
      });
      expect(record.stage.claimedAt).toStrictEqual(record.stage.lastHeartbeatAt);
      expect(record.stage).toStrictEqual(
        await database.prisma.runStage.findUnique({ where: { id: record.stage.id } }),
      );
      expect(record.invocation).toStrictEqual(
        await database.prisma.invocation.findUnique({ where: { id: record.invocation.id } }),
      );
      const events = await auditOf(record.stage.id);
      expect(
        events.map((e) => [e.action, e.actorKind, e.actorId, e.projectId, e.targetType, e.data]),
      ).toEqual([
        [
          'stage.claimed',
          'agent',
          'agt_n',
          'prj_1',
          'run_stage',
          { invocation_id: record.invocation.id, stage_key: 'collect' },
        ],
      ]);
    }

    const rest = await claimNextStages(deps, noWaiter, agent('agt_n'), { ...noWait, max: 20 });
    expect(rest.map((r) => r.stage.id)).toEqual([newest]);
    expect(await claimNextStages(deps, noWaiter, agent('agt_n'), { ...noWait, max: 20 })).toEqual([]);
    expect((await auditOf(held)).map((e) => e.action)).toEqual(['stage.claimed']);
    expect((await database.prisma.runStage.findUnique({ where: { id: others } }))?.state).toBe('assigned');
  });

  test('when another request holds the oldest stage’s invocation, then the next one is claimed without waiting for it', async () => {
    const busy = await seedAssigned('inv_next6', 'agt_s', '2026-11-29T05:10:00.000Z');
    const free = await seedAssigned('inv_next7', 'agt_s', '2026-11-29T05:20:00.000Z');
    let answered = false;
    const claimed = await whileLocked(
      'inv_next6',
      async () => {
        const records = await claimNextStages(deps, noWaiter, agent('agt_s'), { ...noWait, max: 2 });
        answered = true;
        return records;
      },
      async () => {
        // Still under the lock: the call has answered already.
        expect(answered).toBe(true);
      },
    );
    expect(claimed.map((r) => r.stage.id)).toEqual([free]);
    expect((await database.prisma.runStage.findUnique({ where: { id: busy } }))?.state).toBe('assigned');
    // Two calls at once each claim a different stage: one skips the row the other holds.
    await database.prisma.runStage.update({
      where: { id: free },
      data: { state: 'assigned', assignedAt: new Date('2026-11-29T05:30:00.000Z') },
    });
    const third = await seedAssigned('inv_next8', 'agt_s', '2026-11-29T05:40:00.000Z');
    const [one, two] = await Promise.all([
      claimNextStages(deps, noWaiter, agent('agt_s'), { ...noWait, max: 1 }),
      claimNextStages(deps, noWaiter, agent('agt_s'), { ...noWait, max: 1 }),
    ]);
    const ids = [...one, ...two].map((r) => r.stage.id);
    expect(new Set(ids).size).toBe(ids.length);
    const rest = await claimNextStages(deps, noWaiter, agent('agt_s'), { ...noWait, max: 20 });
    expect([...ids, ...rest.map((r) => r.stage.id)].sort()).toEqual([busy, free, third].sort());
  });

  test('when none is assigned, then it waits for an assignment and claims it, or answers nothing when the wait ends', async () => {
    const waits: unknown[][] = [];
    /** A waiter whose wait runs `during` (what happens while the call waits). */
    const waiter = (during: (...args: unknown[]) => Promise<void>): AssignmentWaiter => ({
      watch: (agentId) => ({ wait: (ms, signal) => during(agentId, ms, signal), stop: () => undefined }),
    });
    const quiet = waiter(async (...args) => {
      waits.push(args);
    });
    expect(await claimNextStages(deps, quiet, agent('agt_w'), { waitSeconds: 2, max: 3 })).toEqual([]);
    expect(waits).toEqual([['agt_w', 2000, undefined]]);
    expect(await claimNextStages(deps, quiet, agent('agt_w'), { waitSeconds: 0, max: 3 })).toEqual([]);
    expect(waits).toHaveLength(1);

    let stageId = '';
    // The engine assigns a stage while the call waits, and announces it.
    const woken = waiter(async () => {
      stageId = await seedRun('inv_next9', 'agt_w');
    });
    const claimed = await claimNextStages(deps, woken, agent('agt_w'), { waitSeconds: 5, max: 3 });
    expect(claimed.map((r) => [r.stage.id, r.stage.state])).toEqual([[stageId, 'claimed']]);
    expect((await auditOf(stageId)).map((e) => e.action)).toEqual(['stage.claimed']);

    // A caller gone while it waited claims nothing.
    const abort = new AbortController();
    const gone = waiter(async () => {
      await seedRun('inv_next10', 'agt_w');
      abort.abort();
    });
    expect(
      await claimNextStages(deps, gone, agent('agt_w'), { waitSeconds: 5, max: 3 }, abort.signal),
    ).toEqual([]);
    expect((await database.prisma.runStage.findUnique({ where: { id: 'stg_inv_next10_1' } }))?.state).toBe(
      'assigned',
    );
  });
});

describe('a heartbeat', () => {
  test('when the owner heartbeats, then one statement answers what its listing answers, its progress note kept until replaced', async () => {
    const stageId = await seedRun('inv_beat1', 'agt_a');
    await claimStage(deps, agent('agt_a'), stageId);
    let beat!: Awaited<ReturnType<typeof heartbeatStage>>;
    expect(
      await statementsOf(async () => {
        beat = await heartbeatStage(deps, agent('agt_a'), stageId, 'half way');
      }),
    ).toBe(1);
    expect(beat.stage.progress).toBe('half way');
    expect(beat).toStrictEqual((await listMyStages(deps, noWaiter, agent('agt_a'), 0))[0]);
    expect(beat.stage).toStrictEqual(await database.prisma.runStage.findUnique({ where: { id: stageId } }));

    const kept = await heartbeatStage(deps, agent('agt_a'), stageId);
    expect(kept.stage.progress).toBe('half way');
    expect(kept.stage.lastHeartbeatAt!.getTime()).toBeGreaterThanOrEqual(
      beat.stage.lastHeartbeatAt!.getTime(),
    );
    expect(kept).toStrictEqual((await listMyStages(deps, noWaiter, agent('agt_a'), 0))[0]);
  });

  test('when another agent heartbeats the stage, or it is not open, then the problem is the one of every owner action', async () => {
    const stageId = await seedRun('inv_beat2', 'agt_a');
    expect(await problemOf(heartbeatStage(deps, agent('agt_b'), stageId))).toEqual({
      status: 403,
      code: 'stage_not_owned',
    });
    expect(await problemOf(heartbeatStage(deps, agent('agt_a'), 'stg_unknown'))).toEqual({
      status: 404,
      code: 'stage_not_found',
    });
    await database.prisma.runStage.update({ where: { id: stageId }, data: { state: 'completed' } });
    expect(await problemOf(heartbeatStage(deps, agent('agt_a'), stageId))).toEqual({
      status: 409,
      code: 'stage_completed',
    });
    const stage = await database.prisma.runStage.findUnique({ where: { id: stageId } });
    expect(stage?.lastHeartbeatAt).toBeNull();
  });
});
