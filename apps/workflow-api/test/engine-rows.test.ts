import { createWorkflowDatabase } from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { inPooledTransaction } from '@svc/db-kit';
import { createDatabase, sqlOfPrisma, sqlOn } from '../src/db';
import type { Database, Sql } from '../src/db';
import {
  openStagesByOwner,
  readInvocationWithLimits,
  readInvocationWithStages,
} from '../src/data/invocation-stages.lookups';
import { createWorkflowAudit } from '../src/data/audit.repository';
import {
  assignStage,
  readRunStages,
  releaseStage,
  updateInvocationFields,
} from '../src/data/engine-pass.writer';
import { endInvocation } from '../src/data/invocation.ending';
import type { WorkflowDeps } from '../src/deps';
import { invocationRow } from './support/invocations-fixtures';
import { launchAtOnce, writeLaunch } from '../src/data/invocation-launch.writer';
import { dispatchStampedOutbox } from '../src/data/outbox.writer';
import type { EngineQueue } from '../src/data/reconcile.queue';
import { insertRunWithStages } from '../src/data/run-start.writer';
import {
  lockInvocation,
  lockInvocationOfStage,
  lockInvocationForReconcile,
} from '../src/data/invocations.locks';

/**
 * The engine's statements that read or write whole rows with SQL of their own: the invocation lock reads the row
 * in the statement that locks it, the reconcile's plan reads an invocation with its stages and run limits in one
 * statement, a launch and a run's start are written in one statement each. What they read is what Prisma's own
 * reads answer, every field with its type (dates, JSON, nulls), and what they write reads back as expected.
 */
jest.setTimeout(60_000);

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createWorkflowDatabase();
  database = createDatabase(testDb.url, { poolSize: 2 });
});

afterAll(async () => {
  await database.close();
  await testDb.drop();
});

/** `fn` in a transaction on a pooled connection, as the engine's pass sends its statements. */
const onPool = <T>(fn: (sql: Sql) => Promise<T>) =>
  inPooledTransaction(database.pool, (client) => fn(sqlOn(client)));

describe('the invocation lock', () => {
  test('when an invocation with every kind of field is locked, then the row read with the lock equals Prisma’s read of it', async () => {
    const db = database.prisma;
    const now = new Date('2026-11-29T05:00:00.123Z');
    await db.invocation.create({
      data: {
        id: 'inv_lock1',
        workspaceId: 'wsp_1',
        projectId: 'prj_1',
        idempotencyKey: 'key-1',
        fingerprint: 'f'.repeat(64),
        request: { intent: 'x', nested: { list: [1, 'two', null] } },
        intent: 'Write the report',
        route: { matched: true },
        state: 'launching',
        createdByKind: 'api_key',
        keyExpiresAt: now,
        blockers: [{ code: 'no_stage_owner', message: 'none' }],
        approvalRequired: true,
        launchedAt: now,
        failure: { reason: 'stage_failed' },
        deadlineAt: new Date(now.getTime() + 60_000),
      },
    });
    await db.workflowRun.create({
      data: {
        id: 'run_1',
        invocationId: 'inv_lock1',
        workspaceId: 'wsp_1',
        projectId: 'prj_1',
        startedAt: now,
      },
    });
    await db.runStage.create({
      data: {
        id: 'stg_1',
        runId: 'run_1',
        invocationId: 'inv_lock1',
        workspaceId: 'wsp_1',
        position: 1,
        key: 'write',
        title: 'Write',
        requiredCapabilities: [],
      },
    });
    const read = await db.invocation.findUnique({ where: { id: 'inv_lock1' } });
    const [locked, ofStage, missing] = await db.$transaction(async (tx) => [
      await lockInvocation(tx, 'inv_lock1'),
      await lockInvocationOfStage(tx, 'stg_1'),
      await lockInvocation(tx, 'inv_missing'),
    ]);
    const withLimits = await onPool((sql) => lockInvocationForReconcile(sql, 'inv_lock1', now));
    expect(locked).toEqual(read);
    expect(ofStage).toEqual(read);
    expect(withLimits).toEqual({
      invocation: read,
      limits: { project: null, workspace: null },
      outboxIds: [],
    });
    expect(locked!.launchedAt).toBeInstanceOf(Date);
    expect(missing).toBeNull();
  });

  test('when an invocation is read with its stages, then it and its stages in order equal Prisma’s reads, and one without a run has none', async () => {
    const db = database.prisma;
    await db.runStage.create({
      data: {
        id: 'stg_0',
        runId: 'run_1',
        invocationId: 'inv_lock1',
        workspaceId: 'wsp_1',
        position: 0,
        key: 'collect',
        title: 'Collect',
        requiredCapabilities: ['report'],
        state: 'assigned',
        ownerAgentId: 'agt_1',
        stalledAgentIds: ['agt_2'],
        stalledAt: { agt_2: '2026-11-29T05:00:00.000Z' },
        attempts: 2,
        assignedAt: new Date('2026-11-29T05:00:01.456Z'),
        ownerSpawn: { state: 'started', spawn_id: 'spw_1' },
      },
    });
    await db.invocation.create({
      data: {
        id: 'inv_plain',
        workspaceId: 'wsp_1',
        projectId: 'prj_1',
        idempotencyKey: 'key-2',
        fingerprint: 'e'.repeat(64),
        request: {},
        intent: 'Nothing yet',
        createdByKind: 'api_key',
        keyExpiresAt: new Date(),
      },
    });
    await db.runLimit.createMany({
      data: [
        { scopeId: 'wsp_1', scope: 'workspace', workspaceId: 'wsp_1', maxInProgress: 7 },
        { scopeId: 'prj_other', scope: 'project', workspaceId: 'wsp_1', maxInProgress: 1 },
      ],
    });
    const read = await readInvocationWithStages(database.pool, 'inv_lock1');
    expect(read).toEqual({
      limits: { project: null, workspace: 7 },
      invocation: await db.invocation.findUnique({ where: { id: 'inv_lock1' } }),
      stages: await db.runStage.findMany({
        where: { invocationId: 'inv_lock1' },
        orderBy: { position: 'asc' },
      }),
    });
    expect(read!.stages.map((s) => s.id)).toEqual(['stg_0', 'stg_1']);
    expect(await readInvocationWithStages(database.pool, 'inv_plain')).toEqual({
      invocation: await db.invocation.findUnique({ where: { id: 'inv_plain' } }),
      stages: [],
      limits: { project: null, workspace: 7 },
    });
    await db.runLimit.create({
      data: { scopeId: 'prj_1', scope: 'project', workspaceId: 'wsp_1', maxInProgress: 3 },
    });
    await db.outboxEntry.createMany({
      data: [
        { id: 'obx_1', invocationId: 'inv_plain', reason: 'launch' },
        { id: 'obx_2', invocationId: 'inv_plain', reason: 'sweep' },
        {
          id: 'obx_3',
          invocationId: 'inv_plain',
          reason: 'sweep',
          processedAt: new Date('2026-11-29T04:00:00Z'),
        },
        { id: 'obx_4', invocationId: 'inv_lock1', reason: 'sweep' },
      ],
    });
    const processedAt = new Date('2026-11-29T05:30:00.000Z');
    const locked = await onPool((sql) => lockInvocationForReconcile(sql, 'inv_plain', processedAt));
    expect({ ...locked, outboxIds: [...locked!.outboxIds].sort() }).toEqual({
      invocation: await db.invocation.findUnique({ where: { id: 'inv_plain' } }),
      limits: { project: 3, workspace: 7 },
      outboxIds: ['obx_1', 'obx_2'],
    });
    // Only the invocation's pending rows were marked, at the time given.
    const rows = await db.outboxEntry.findMany({ orderBy: { id: 'asc' } });
    expect(rows.map((row) => [row.id, row.processedAt?.toISOString() ?? null])).toEqual([
      ['obx_1', processedAt.toISOString()],
      ['obx_2', processedAt.toISOString()],
      ['obx_3', '2026-11-29T04:00:00.000Z'],
      ['obx_4', null],
    ]);
    // A transaction that rolls back leaves them as they were.
    await db.outboxEntry.update({ where: { id: 'obx_4' }, data: { processedAt: null } });
    await expect(
      onPool(async (sql) => {
        expect((await lockInvocationForReconcile(sql, 'inv_lock1', processedAt))?.outboxIds).toEqual([
          'obx_4',
        ]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await db.outboxEntry.findUnique({ where: { id: 'obx_4' } }))?.processedAt).toBeNull();
    expect(await readInvocationWithStages(database.pool, 'inv_missing')).toBeNull();
  });

  test('when a launch reads the invocation with its run limits, then it is Prisma’s row and the limits set, and another project’s id finds nothing', async () => {
    const db = database.prisma;
    expect(await readInvocationWithLimits(database.pool, 'inv_lock1', 'prj_1')).toEqual({
      invocation: await db.invocation.findUnique({ where: { id: 'inv_lock1' } }),
      limits: { project: 3, workspace: 7 },
    });
    expect(await readInvocationWithLimits(database.pool, 'inv_lock1', 'prj_2')).toBeNull();
  });

  test('when owners are counted, then each agent has its open stages (assigned, claimed, blocked) and one with none is left out', async () => {
    const db = database.prisma;
    const stage = (id: string, owner: string | null, state: string, position: number) => ({
      id,
      runId: 'run_1',
      invocationId: 'inv_lock1',
      workspaceId: 'wsp_1',
      position,
      key: id,
      title: id,
      requiredCapabilities: [],
      ownerAgentId: owner,
      state,
    });
    await db.runStage.createMany({
      data: [
        stage('stg_o1', 'agt_a', 'assigned', 11),
        stage('stg_o2', 'agt_a', 'claimed', 12),
        stage('stg_o3', 'agt_a', 'completed', 13),
        stage('stg_o4', 'agt_b', 'blocked', 14),
        stage('stg_o5', 'agt_c', 'completed', 15),
        stage('stg_o6', null, 'pending', 16),
      ],
    });
    const open = await openStagesByOwner(database.pool, ['agt_a', 'agt_b', 'agt_c', 'agt_none']);
    expect(Object.fromEntries(open)).toEqual({ agt_a: 2, agt_b: 1 });
    await db.runStage.deleteMany({ where: { id: { startsWith: 'stg_o' } } });
  });

  test('when a launch is written, then the invocation is launching as Prisma reads it, with one outbox row and one audit event', async () => {
    const db = database.prisma;
    const launchedAt = new Date('2026-11-29T05:10:00.000Z');
    const { invocation, job } = await db.$transaction(async (tx) => {
      await lockInvocation(tx, 'inv_plain');
      return writeLaunch(tx, createWorkflowAudit(db), {
        invocationId: 'inv_plain',
        projectId: 'prj_1',
        blockers: [],
        approvalRequired: false,
        launchedAt,
        deadlineAt: null,
        event: {
          workspaceId: 'wsp_1',
          projectId: 'prj_1',
          action: 'invocation.launch_requested',
          targetType: 'invocation',
          targetId: 'inv_plain',
          data: { outcome: 'accepted' },
        },
      });
    });
    expect(invocation).toEqual(await db.invocation.findUnique({ where: { id: 'inv_plain' } }));
    expect(invocation).toMatchObject({ state: 'launching', attention: 'none', blockers: [], launchedAt });
    expect(job).toEqual({
      outboxId: expect.stringMatching(/^obx_/),
      invocationId: 'inv_plain',
      projectId: 'prj_1',
    });
    expect(
      await db.outboxEntry.findMany({
        where: { invocationId: 'inv_plain', reason: 'launch', enqueuedAt: null, processedAt: null },
      }),
    ).toEqual([
      expect.objectContaining({ id: job.outboxId, reason: 'launch', processedAt: null, enqueuedAt: null }),
    ]);
    expect(await db.auditEvent.findMany({ where: { targetId: 'inv_plain' } })).toEqual([
      expect.objectContaining({ action: 'invocation.launch_requested', data: { outcome: 'accepted' } }),
    ]);
  });

  test('when a launch is written in one statement, then it is the locked launch’s rows with the outbox row stamped; a launched invocation is left alone; a refused enqueue clears the stamp', async () => {
    const db = database.prisma;
    await db.invocation.create({
      data: {
        id: 'inv_once',
        workspaceId: 'wsp_1',
        projectId: 'prj_1',
        idempotencyKey: 'key-once',
        fingerprint: 'd'.repeat(64),
        request: {},
        intent: 'Launch me',
        createdByKind: 'api_key',
        keyExpiresAt: new Date(),
        state: 'blocked',
      },
    });
    const now = new Date('2026-11-29T05:12:00.000Z');
    const launch = {
      invocationId: 'inv_once',
      projectId: 'prj_1',
      blockers: [{ code: 'no_stage_owner', message: 'waiting' }] as never,
      approvalRequired: true,
      now,
      deadlineSeconds: 90,
      event: {
        workspaceId: 'wsp_1',
        projectId: 'prj_1',
        action: 'invocation.launch_requested',
        targetType: 'invocation',
        targetId: 'inv_once',
        data: { outcome: 'accepted_waiting_for_owner' },
      },
    };
    // Another project's id launches nothing.
    expect(
      await launchAtOnce(database.pool, createWorkflowAudit(db), { ...launch, projectId: 'prj_2' }),
    ).toBeNull();
    const written = await launchAtOnce(database.pool, createWorkflowAudit(db), launch);
    expect(written!.invocation).toEqual(await db.invocation.findUnique({ where: { id: 'inv_once' } }));
    expect(written!.invocation).toMatchObject({
      state: 'launching',
      attention: 'none',
      attentionReason: null,
      blockers: [{ code: 'no_stage_owner', message: 'waiting' }],
      approvalRequired: true,
      launchedAt: now,
      deadlineAt: new Date(now.getTime() + 90_000),
      updatedAt: now,
    });
    expect(written!.job).toEqual({
      outboxId: expect.stringMatching(/^obx_/),
      invocationId: 'inv_once',
      projectId: 'prj_1',
    });
    expect(await db.outboxEntry.findMany({ where: { invocationId: 'inv_once' } })).toEqual([
      expect.objectContaining({
        id: written!.job.outboxId,
        reason: 'launch',
        enqueuedAt: now,
        attempts: 1,
        processedAt: null,
      }),
    ]);
    expect(await db.auditEvent.findMany({ where: { targetId: 'inv_once' } })).toEqual([
      expect.objectContaining({
        action: 'invocation.launch_requested',
        data: { outcome: 'accepted_waiting_for_owner' },
      }),
    ]);

    // Launching now: a second launch writes nothing (the caller takes the locked way).
    expect(
      await launchAtOnce(database.pool, createWorkflowAudit(db), { ...launch, now: new Date() }),
    ).toBeNull();
    expect(await db.outboxEntry.count({ where: { invocationId: 'inv_once' } })).toBe(1);
    expect(await db.auditEvent.count({ where: { targetId: 'inv_once' } })).toBe(1);

    // Redis refuses the job: the stamp goes, so the sweeper's first pass enqueues the row.
    const refusing = { enqueue: async () => false } as unknown as EngineQueue;
    await dispatchStampedOutbox(db, refusing, [written!.job]);
    expect(
      (await db.outboxEntry.findUnique({ where: { id: written!.job.outboxId } }))?.enqueuedAt,
    ).toBeNull();
    const accepting = { enqueue: async () => true } as unknown as EngineQueue;
    await db.outboxEntry.update({ where: { id: written!.job.outboxId }, data: { enqueuedAt: now } });
    await dispatchStampedOutbox(db, accepting, [written!.job]);
    expect((await db.outboxEntry.findUnique({ where: { id: written!.job.outboxId } }))?.enqueuedAt).toEqual(
      now,
    );
  });

  test('when a run starts, then the run and its stages are stored as the engine expects them, the invocation is running and out of the queue, and all of it once only', async () => {
    const db = database.prisma;
    const startedAt = new Date('2026-11-29T05:20:00.000Z');
    const start = {
      runId: 'run_2',
      invocationId: 'inv_plain',
      workspaceId: 'wsp_1',
      projectId: 'prj_1',
      startedAt,
      stages: [
        { id: 'stg_a', position: 1, key: 'collect', title: 'Collect', requiredCapabilities: ['a', 'b'] },
        { id: 'stg_b', position: 2, key: 'write', title: 'Write', requiredCapabilities: [] },
      ],
      wasQueued: true,
    };
    // Queued for a run slot until now.
    await db.invocation.update({
      where: { id: 'inv_plain' },
      data: {
        queuedAt: new Date('2026-11-29T05:15:00.000Z'),
        attention: 'blocked',
        attentionReason: 'At the limit.',
        blockers: [{ code: 'project_run_limit_reached' }],
      },
    });
    const running = await onPool((sql) => insertRunWithStages(sql, start));
    expect(running).toEqual(await db.invocation.findUnique({ where: { id: 'inv_plain' } }));
    expect(running).toMatchObject({
      state: 'running',
      // Kept from the launch.
      launchedAt: new Date('2026-11-29T05:10:00.000Z'),
      queuedAt: null,
      attention: 'none',
      attentionReason: null,
      blockers: [],
    });
    expect(await db.workflowRun.findUnique({ where: { invocationId: 'inv_plain' } })).toEqual({
      id: 'run_2',
      invocationId: 'inv_plain',
      workspaceId: 'wsp_1',
      projectId: 'prj_1',
      state: 'running',
      startedAt,
      endedAt: null,
    });
    const stages = await db.runStage.findMany({
      where: { invocationId: 'inv_plain' },
      orderBy: { position: 'asc' },
    });
    expect(stages).toEqual(
      start.stages.map((stage) => ({
        id: stage.id,
        runId: 'run_2',
        invocationId: 'inv_plain',
        workspaceId: 'wsp_1',
        position: stage.position,
        key: stage.key,
        title: stage.title,
        requiredCapabilities: stage.requiredCapabilities,
        state: 'pending',
        ownerAgentId: null,
        handoffId: null,
        stalledAgentIds: [],
        stalledAt: {},
        attempts: 0,
        failures: 0,
        failureReason: null,
        blockerReason: null,
        progress: null,
        summary: null,
        firstAssignedAt: null,
        assignedAt: null,
        claimedAt: null,
        lastHeartbeatAt: null,
        completedAt: null,
        ownerSpawn: null,
      })),
    );
    // Again, with other ids (another pass): the invocation's run is left as it is.
    const again = { ...start, runId: 'run_3', stages: [{ ...start.stages[0]!, id: 'stg_c' }] };
    expect(await onPool((sql) => insertRunWithStages(sql, again))).toBeNull();
    expect(await db.workflowRun.count({ where: { invocationId: 'inv_plain' } })).toBe(1);
    expect(await db.runStage.count({ where: { invocationId: 'inv_plain' } })).toBe(2);
  });
});

describe("the reconcile pass's writes", () => {
  /** An invocation `id` running a run of two stages: the first claimed by `agt_1` (handoff `hof_<id>`), the second pending. */
  async function seedRunning(id: string) {
    const db = database.prisma;
    const at = new Date('2026-11-29T06:00:00.000Z');
    await db.invocation.create({
      data: invocationRow(id, { workspaceId: 'wsp_9', projectId: 'prj_9', state: 'running', launchedAt: at }),
    });
    await db.workflowRun.create({
      data: { id: `run_${id}`, invocationId: id, workspaceId: 'wsp_9', projectId: 'prj_9', startedAt: at },
    });
    const stage = { runId: `run_${id}`, invocationId: id, workspaceId: 'wsp_9', requiredCapabilities: [] };
    await db.runStage.createMany({
      data: [
        {
          ...stage,
          id: `stg_${id}_1`,
          position: 1,
          key: 'collect',
          title: 'Collect',
          state: 'claimed',
          ownerAgentId: 'agt_1',
          handoffId: `hof_${id}`,
          attempts: 1,
          lastHeartbeatAt: new Date('2026-11-29T06:00:01.234Z'),
        },
        { ...stage, id: `stg_${id}_2`, position: 2, key: 'write', title: 'Write' },
      ],
    });
  }

  test('when the pass writes an invocation’s fields and reads its stages on a pooled connection, then it answers Prisma’s reads of them, updated at the pass’s time', async () => {
    const db = database.prisma;
    await seedRunning('inv_pass1');
    const now = new Date('2026-11-29T06:05:00.321Z');
    const written = await onPool((sql) =>
      updateInvocationFields(
        sql,
        'inv_pass1',
        {
          attention: 'blocked',
          attentionReason: 'Waiting for an owner.',
          blockers: [{ code: 'no_stage_owner', stage: { key: 'write' } }],
          queuedAt: null,
        },
        now,
      ),
    );
    expect(written).toEqual(await db.invocation.findUnique({ where: { id: 'inv_pass1' } }));
    expect(written).toMatchObject({
      state: 'running',
      attention: 'blocked',
      blockers: [{ code: 'no_stage_owner', stage: { key: 'write' } }],
      updatedAt: now,
    });
    expect(await onPool((sql) => readRunStages(sql, 'inv_pass1'))).toEqual(
      await db.runStage.findMany({ where: { invocationId: 'inv_pass1' }, orderBy: { position: 'asc' } }),
    );
  });

  test('when a stage is assigned or released, then it is only while its owner, state and last heartbeat are those read', async () => {
    const db = database.prisma;
    await seedRunning('inv_pass2');
    const now = new Date('2026-11-29T06:06:00.000Z');
    const [first, second] = await onPool((sql) => readRunStages(sql, 'inv_pass2'));
    // Released with a heartbeat other than the one read: a late heartbeat won, nothing changes.
    const stale = { ...first!, lastHeartbeatAt: new Date('2026-11-29T06:00:00.000Z') };
    const stalled = { agentIds: ['agt_1'], at: { agt_1: now.toISOString() } };
    expect(await onPool((sql) => releaseStage(sql, stale, stalled))).toBe(false);
    expect(await onPool((sql) => releaseStage(sql, first!, stalled))).toBe(true);
    expect(await db.runStage.findUnique({ where: { id: first!.id } })).toMatchObject({
      state: 'pending',
      ownerAgentId: null,
      handoffId: null,
      stalledAgentIds: ['agt_1'],
      stalledAt: { agt_1: now.toISOString() },
    });
    // Assigned as read before the release (owned by agt_1): no longer so, nothing changes.
    const owner = { agentId: 'agt_2', handoffId: 'hof_2' };
    expect(await onPool((sql) => assignStage(sql, first!, owner, now))).toBe(false);
    const released = (await onPool((sql) => readRunStages(sql, 'inv_pass2')))[0]!;
    const spawn = { state: 'settled', spawn_id: 'spw_9' };
    expect(await onPool((sql) => assignStage(sql, released, { ...owner, ownerSpawn: spawn }, now))).toBe(
      true,
    );
    expect(await db.runStage.findUnique({ where: { id: first!.id } })).toMatchObject({
      state: 'assigned',
      ownerAgentId: 'agt_2',
      handoffId: 'hof_2',
      attempts: 2,
      assignedAt: now,
      firstAssignedAt: now,
      lastHeartbeatAt: now,
      claimedAt: null,
      ownerSpawn: spawn,
    });
    // A pending stage without an owner is taken once; its spawn record is left as it was when none is given.
    expect(await onPool((sql) => assignStage(sql, second!, owner, now))).toBe(true);
    expect(await onPool((sql) => assignStage(sql, second!, owner, now))).toBe(false);
    expect(await db.runStage.findUnique({ where: { id: second!.id } })).toMatchObject({
      state: 'assigned',
      attempts: 1,
      ownerSpawn: null,
    });
  });

  test('when an invocation ends on a pooled connection and another through Prisma’s transaction, then both write the same rows and answer Prisma’s read', async () => {
    const db = database.prisma;
    const deps = { audit: createWorkflowAudit(db) } as unknown as WorkflowDeps;
    const now = new Date('2026-11-29T06:07:00.000Z');
    const actor = { kind: 'service', service: 'workflow-engine' } as const;
    const cancel = {
      state: 'cancelled' as const,
      cancellation: {
        cancelled_by: { kind: 'api_key' as const, id: 'key_1' },
        reason: 'no longer needed',
        cancelled_at: now.toISOString(),
      },
    };
    const ended: Record<string, unknown> = {};
    for (const id of ['inv_end_pool', 'inv_end_prisma']) {
      await seedRunning(id);
      const invocation = (await db.invocation.findUnique({ where: { id } }))!;
      const result =
        id === 'inv_end_pool'
          ? await onPool((sql) => endInvocation(deps, sql, invocation, cancel, actor, now))
          : await db.$transaction((tx) =>
              endInvocation(deps, sqlOfPrisma(tx), invocation, cancel, actor, now),
            );
      expect(result.invocation).toEqual(await db.invocation.findUnique({ where: { id } }));
      expect(result.deliveryJobs).toEqual([]);
      const stages = await db.runStage.findMany({
        where: { invocationId: id },
        orderBy: { position: 'asc' },
      });
      ended[id] = {
        invocation: { ...result.invocation, id: null, idempotencyKey: null, createdAt: null },
        stages: stages.map((s) => [s.state, s.completedAt]),
        run: (await db.workflowRun.findUnique({ where: { invocationId: id } }))!.state,
        closures: (await db.handoffClosure.findMany({ where: { invocationId: id } })).map((c) => [
          c.handoffId.replace(id, ''),
          c.reason,
        ]),
        audit: (await db.auditEvent.findMany({ where: { targetId: id } })).map((e) => [
          e.action,
          e.actorKind,
          e.data,
        ]),
      };
    }
    expect(ended.inv_end_pool).toEqual(ended.inv_end_prisma);
    expect(ended.inv_end_pool).toMatchObject({
      invocation: { state: 'cancelled', completedAt: now, attention: 'none', blockers: [], failure: null },
      stages: [
        ['cancelled', now],
        ['skipped', null],
      ],
      run: 'cancelled',
      closures: [['hof_', 'invocation_cancelled']],
      audit: [['invocation.cancelled', 'service', { from_state: 'running', reason: 'no longer needed' }]],
    });
  });
});
