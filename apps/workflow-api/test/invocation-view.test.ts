import { createWorkflowDatabase } from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { loadRunDetails, readInvocationView } from '../src/data/run-details.lookups';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import type { Prisma } from '../src/generated/prisma/client';
import { invocationRow } from './support/invocations-fixtures';

/**
 * The invocation view (GET …/invocations/{id}) is read in one statement: it must answer exactly what the
 * invocation's own read and {@link loadRunDetails} answer, for an invocation without a run and for one with
 * its run, stages in order, artifact and retries.
 */
describe('the invocation view in one statement', () => {
  let db: TestDatabase;
  let database: Database;
  const at = new Date('2026-11-29T05:10:00.123Z');

  beforeAll(async () => {
    db = await createWorkflowDatabase();
    database = createDatabase(db.url, { poolSize: 2 });
  });

  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  const invocation = (id: string, extra: Partial<Prisma.InvocationUncheckedCreateInput> = {}) =>
    database.prisma.invocation.create({ data: invocationRow(id, extra) });

  async function expectSameView(id: string) {
    const expected = {
      invocation: await database.prisma.invocation.findFirst({ where: { id, projectId: 'prj_1' } }),
      details: await loadRunDetails(database.prisma, id),
    };
    // In a transaction's client and on the pool alike.
    expect(await readInvocationView(database.prisma, 'prj_1', id)).toStrictEqual(expected);
    expect(await readInvocationView(database.pool, 'prj_1', id)).toStrictEqual(expected);
  }

  test('an invocation without a run', async () => {
    await invocation('inv_view0');
    await expectSameView('inv_view0');
  });

  test('an invocation with its run, three stages, an artifact and two retries', async () => {
    await invocation('inv_view1', { state: 'failed', launchedAt: at, completedAt: at });
    await database.prisma.workflowRun.create({
      data: {
        id: 'run_view1',
        invocationId: 'inv_view1',
        workspaceId: 'wks_1',
        projectId: 'prj_1',
        state: 'ended',
        startedAt: at,
        endedAt: at,
      },
    });
    // Written out of order: the view lists them by position.
    for (const position of [2, 3, 1]) {
      await database.prisma.runStage.create({
        data: {
          id: `stg_view1_${position}`,
          runId: 'run_view1',
          invocationId: 'inv_view1',
          workspaceId: 'wks_1',
          position,
          key: `s${position}`,
          title: `Stage ${position}`,
          requiredCapabilities: ['report'],
          state: position === 3 ? 'assigned' : 'completed',
          ownerAgentId: 'agt_1',
          stalledAgentIds: position === 2 ? ['agt_0'] : [],
          stalledAt: position === 2 ? { agt_0: at.toISOString() } : {},
          assignedAt: at,
          completedAt: position === 3 ? null : at,
          ownerSpawn: position === 1 ? { spawn_id: 'spn_1' } : undefined,
        },
      });
    }
    await database.prisma.artifact.create({
      data: {
        id: 'art_view1',
        invocationId: 'inv_view1',
        runId: 'run_view1',
        workspaceId: 'wks_1',
        projectId: 'prj_1',
        schemaId: 'sch_1',
        schemaName: 'report-1',
        schemaVersion: '1.0.0',
        version: 1,
        summary: 'done',
        payload: { title: 'x' },
        payloadHash: 'a'.repeat(64),
        provenance: {},
        limitations: [],
        createdByKind: 'agent',
        createdById: 'agt_1',
        createdAt: at,
      },
    });
    await invocation('inv_view1r2', { retryOf: 'inv_view1', createdAt: new Date(at.getTime() + 2) });
    await invocation('inv_view1r1', { retryOf: 'inv_view1', createdAt: new Date(at.getTime() + 1) });
    await expectSameView('inv_view1');
    const view = await readInvocationView(database.prisma, 'prj_1', 'inv_view1');
    expect(view?.details.stages.map((s) => s.position)).toEqual([1, 2, 3]);
    expect(view?.details.retriedAs).toEqual(['inv_view1r1', 'inv_view1r2']);
  });

  test('another project’s invocation, or an unknown one, is null', async () => {
    await invocation('inv_view2');
    expect(await readInvocationView(database.prisma, 'prj_other', 'inv_view2')).toBeNull();
    expect(await readInvocationView(database.prisma, 'prj_1', 'inv_unknown')).toBeNull();
    expect(await readInvocationView(database.pool, 'prj_other', 'inv_view2')).toBeNull();
  });
});
