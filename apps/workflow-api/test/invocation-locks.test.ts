import { createWorkflowDatabase } from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { lockInvocation, lockInvocationOfStage } from '../src/data/invocations.locks';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';

/**
 * The lock of an invocation reads its row in the statement that locks it (`SELECT * … FOR UPDATE`), so what it
 * answers must be exactly what Prisma reads for the model: every column, typed alike (dates, JSON, nulls).
 */
describe('invocation locks', () => {
  let db: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    db = await createWorkflowDatabase();
    database = createDatabase(db.url, { poolSize: 2 });
  });

  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  async function seed(id: string, full: boolean) {
    const now = new Date('2026-11-29T04:50:00.123Z');
    await database.prisma.invocation.create({
      data: {
        id,
        workspaceId: 'wks_1',
        projectId: 'prj_1',
        idempotencyKey: `key-${id}`,
        fingerprint: 'f'.repeat(64),
        request: { intent: 'weekly report', inputs: { n: 1, nested: [true, null] } },
        intent: 'Weekly report',
        createdByKind: 'api_key',
        keyExpiresAt: new Date(now.getTime() + 86_400_000),
        ...(full
          ? {
              correlationId: 'corr-1',
              contractId: 'wfc_1',
              templateKey: 'flow-1',
              templateVersion: '1.0.0',
              route: { matched: true, explanation: 'keyword' },
              state: 'running',
              attention: 'blocked',
              createdById: 'key_1',
              attentionReason: 'waiting',
              blockers: [{ code: 'no_stage_owner', stage_key: 'a' }],
              approvalRequired: true,
              approvalDecision: 'approved',
              approvalBy: 'prt_1',
              approvalAt: now,
              approvalComment: 'ok',
              launchedAt: now,
              completedAt: now,
              failure: { reason: 'stage_failed' },
              cancellation: { reason: 'x' },
              deadlineAt: now,
              queuedAt: now,
              retryOf: 'inv_other',
            }
          : {}),
      },
    });
    await database.prisma.runStage.create({
      data: {
        id: `stg_${id}`,
        runId: `run_${id}`,
        invocationId: id,
        workspaceId: 'wks_1',
        position: 1,
        key: 'a',
        title: 'A',
      },
    });
  }

  test.each([
    ['every column set', true],
    ['only what is required (defaults and nulls)', false],
  ])('with %s, the locked row equals the model Prisma reads', async (_, full) => {
    const id = `inv_lock${full ? 'full' : 'min'}`;
    await seed(id, full);
    const expected = await database.prisma.invocation.findUnique({ where: { id } });
    await database.prisma.$transaction(async (tx) => {
      expect(await lockInvocation(tx, id)).toStrictEqual(expected);
      expect(await lockInvocationOfStage(tx, `stg_${id}`)).toStrictEqual(expected);
    });
  });

  test('an unknown invocation or stage is null', async () => {
    await database.prisma.$transaction(async (tx) => {
      expect(await lockInvocation(tx, 'inv_unknown')).toBeNull();
      expect(await lockInvocationOfStage(tx, 'stg_unknown')).toBeNull();
    });
  });

  test('the lock holds: a second transaction waits for the first to end', async () => {
    await seed('inv_lockwait', false);
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = database.prisma.$transaction(async (tx) => {
      await lockInvocation(tx, 'inv_lockwait');
      order.push('first locked');
      await held;
      order.push('first done');
    });
    await new Promise((r) => setTimeout(r, 50));
    const second = database.prisma.$transaction(async (tx) => {
      await lockInvocationOfStage(tx, 'stg_inv_lockwait');
      order.push('second locked');
    });
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first locked', 'first done', 'second locked']);
  });
});
