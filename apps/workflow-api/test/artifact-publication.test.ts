import type { AgentActor } from '@svc/auth';
import { poolCounts } from '@svc/db-kit';
import { AppError, canonicalHash, createLogger } from '@svc/service-kit';
import { createWorkflowDatabase } from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { createWorkflowAudit } from '../src/data/audit.repository';
import type { DeliveryJob } from '../src/data/delivery.queue';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import type { WorkflowDeps } from '../src/deps';
import { createArtifactValidatorCache } from '../src/domain/artifact-schema-rules';
import { publishArtifact } from '../src/use-cases/invocations/publish-artifact';
import type { PublishBody } from '../src/use-cases/invocations/publish-artifact';
import { agentActor } from './support/invocations-fixtures';

/**
 * The publication of an invocation's artifact by the owner of its final stage (decision 102): what it answers
 * and stores — the envelope, the invocation completed, its run ended, its final stage completed with the
 * evidence, the audit events and one delivery per subscriber of `invocation.completed` — and in how many
 * statements; a replay, a refused payload and a publisher without a stage are answered as before.
 */
jest.setTimeout(60_000);

const WORKSPACE = 'wsp_pub';
const PROJECT = {
  id: 'prj_pub',
  code: 'PUB',
  name: 'Publications',
  workspace: { id: WORKSPACE, slug: 'pub' },
};
const FIRST_OWNER = 'agt_first';
const FINAL_OWNER = 'agt_final';
const T0 = new Date('2026-11-29T06:00:00.000Z');

let testDb: TestDatabase;
let database: Database;
let deps: WorkflowDeps;
let now: Date;
const enqueued: DeliveryJob[] = [];
const announced: string[] = [];
const validators = createArtifactValidatorCache();

const agent = (agentId: string) => agentActor(agentId, WORKSPACE);

beforeAll(async () => {
  testDb = await createWorkflowDatabase();
  database = createDatabase(testDb.url, { poolSize: 3 });
  const db = database.prisma;
  deps = {
    db,
    pool: database.pool,
    audit: createWorkflowAudit(db),
    logger: createLogger({ name: 'publication-test', level: 'silent' }),
    now: () => now,
    queue: {
      announceInvocationChanges: async (ids: string[]) => {
        announced.push(...ids);
      },
    },
    deliveries: {
      enqueue: async (jobs: DeliveryJob[]) => {
        enqueued.push(...jobs);
        return true;
      },
    },
  } as unknown as WorkflowDeps;
  await db.workflowContract.create({
    data: {
      id: 'wfc_pub',
      workspaceId: WORKSPACE,
      projectId: PROJECT.id,
      name: 'Reports',
      classifier: { intentContains: ['report'], requiredCapabilities: [], metadata: {} },
      templateKey: 'report-flow',
      templateVersion: '1.0.0',
    },
  });
  await db.workflowTemplate.create({
    data: {
      id: 'wft_pub',
      projectId: PROJECT.id,
      key: 'report-flow',
      version: '1.0.0',
      firstUsedAt: T0,
      definition: {
        required_capabilities: [],
        artifact_schema: { name: 'report', version: '1.0.0' },
        guardrails: { human_approval_required: false },
        stages: [
          { key: 'collect', title: 'Collect', required_capabilities: [] },
          { key: 'write', title: 'Write', required_capabilities: [] },
        ],
      },
    },
  });
  await db.artifactSchema.create({
    data: {
      id: 'ars_pub',
      workspaceId: WORKSPACE,
      projectId: PROJECT.id,
      name: 'report',
      version: '1.0.0',
      jsonSchema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
      schemaHash: 'a'.repeat(64),
    },
  });
  const subscription = (id: string, events: unknown, extra: Record<string, unknown> = {}) => ({
    id,
    workspaceId: WORKSPACE,
    projectId: PROJECT.id,
    url: `https://receiver.test/${id}`,
    events: events as object,
    secretSealed: 'sealed',
    ...extra,
  });
  await db.deliverySubscription.createMany({
    data: [
      subscription('dsb_completed', ['invocation.failed', 'invocation.completed']),
      subscription('dsb_only', ['invocation.completed']),
      subscription('dsb_failed', ['invocation.failed']),
      subscription('dsb_inactive', ['invocation.completed'], { isActive: false }),
      subscription('dsb_deleted', ['invocation.completed'], { deletedAt: T0 }),
      subscription('dsb_object', { 'invocation.completed': true }),
      { ...subscription('dsb_other', ['invocation.completed']), projectId: 'prj_other' },
    ],
  });
});

afterAll(async () => {
  await database.close();
  await testDb.drop();
});

/** An invocation running its two stages: the first completed, the final one claimed by its owner. */
async function runningInvocation(id: string, finalState = 'claimed'): Promise<void> {
  const db = database.prisma;
  await db.invocation.create({
    data: {
      id,
      workspaceId: WORKSPACE,
      projectId: PROJECT.id,
      idempotencyKey: `key-${id}`,
      fingerprint: 'f'.repeat(64),
      correlationId: `corr-${id}`,
      request: { intent: 'weekly report' },
      intent: 'Weekly report',
      contractId: 'wfc_pub',
      templateKey: 'report-flow',
      templateVersion: '1.0.0',
      state: 'running',
      attention: 'stalled',
      attentionReason: 'Slow owner',
      blockers: [{ code: 'x', message: 'y' }],
      createdByKind: 'api_key',
      createdById: 'key_1',
      keyExpiresAt: new Date(T0.getTime() + 86_400_000),
      launchedAt: T0,
    },
  });
  await db.workflowRun.create({
    data: { id: `run_${id}`, invocationId: id, workspaceId: WORKSPACE, projectId: PROJECT.id, startedAt: T0 },
  });
  const stage = (position: number, key: string, extra: Record<string, unknown>) => ({
    id: `stg_${id}_${position}`,
    runId: `run_${id}`,
    invocationId: id,
    workspaceId: WORKSPACE,
    position,
    key,
    title: key,
    requiredCapabilities: [],
    ...extra,
  });
  await db.runStage.createMany({
    data: [
      stage(0, 'collect', {
        state: 'completed',
        ownerAgentId: FIRST_OWNER,
        firstAssignedAt: T0,
        completedAt: new Date(T0.getTime() + 1_000),
        summary: 'collected',
      }),
      stage(1, 'write', {
        state: finalState,
        ownerAgentId: FINAL_OWNER,
        firstAssignedAt: new Date(T0.getTime() + 2_000),
        assignedAt: new Date(T0.getTime() + 2_000),
        claimedAt: new Date(T0.getTime() + 2_500),
        lastHeartbeatAt: new Date(T0.getTime() + 3_000),
        blockerReason: 'waiting on data',
        progress: 'half',
      }),
    ],
  });
}

const body = (title: unknown = 'Weekly'): PublishBody => ({
  payload: { title, figures: [1, 2, 3] },
  summary: 'The weekly report, token=sk_live_abcdefghijklmnop',
  provenance: { model: 'm-1', api_key: 'secret-value' },
  limitations: ['draft numbers'],
  evidence: [
    { kind: 'log', content: { lines: ['built'], password: 'hunter2' } },
    { kind: 'link', content: 'https://example.test/report' },
  ],
});

/** The statements a publication sent through the pool, with its answer. */
async function counted<T>(call: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const before = poolCounts(database.pool)!.statements;
  const result = await call();
  return { result, statements: poolCounts(database.pool)!.statements - before };
}

const publish = (invocationId: string, actor: AgentActor, request: PublishBody) =>
  publishArtifact(deps, validators, actor, PROJECT, invocationId, request, `req-${invocationId}`);

beforeAll(async () => {
  // A first publication reads the template and the schema version once for the process.
  await runningInvocation('inv_warm');
  now = new Date(T0.getTime() + 5_000);
  await publish('inv_warm', agent(FINAL_OWNER), body());
});

describe('a publication by the final stage’s owner', () => {
  test('when the owner publishes a valid payload, then the envelope, the completed invocation, stage and run, the evidence, the audit events and the deliveries are stored as before, in few statements', async () => {
    await runningInvocation('inv_pub');
    now = new Date(T0.getTime() + 10_000);
    enqueued.length = 0;
    announced.length = 0;
    const { result, statements } = await counted(() => publish('inv_pub', agent(FINAL_OWNER), body()));

    const db = database.prisma;
    const stored = await db.artifact.findUniqueOrThrow({ where: { invocationId: 'inv_pub' } });
    expect(result).toEqual({ artifact: stored, replayed: false });
    expect(result.artifact.createdAt).toBeInstanceOf(Date);
    const payload = { title: 'Weekly', figures: [1, 2, 3] };
    expect(stored).toEqual({
      id: expect.stringMatching(/^art_/),
      invocationId: 'inv_pub',
      runId: 'run_inv_pub',
      workspaceId: WORKSPACE,
      projectId: PROJECT.id,
      schemaId: 'ars_pub',
      schemaName: 'report',
      schemaVersion: '1.0.0',
      version: 1,
      summary: 'The weekly report, token=sk_live_abcdefghijklmnop',
      payload,
      payloadHash: canonicalHash(payload),
      provenance: {
        contract_id: 'wfc_pub',
        template: { key: 'report-flow', version: '1.0.0' },
        stages: [
          { key: 'collect', owner_agent_id: FIRST_OWNER, completed_at: '2026-11-29T06:00:01.000Z' },
          { key: 'write', owner_agent_id: FINAL_OWNER, completed_at: now.toISOString() },
        ],
        correlation_id: 'corr-inv_pub',
        producer: { model: 'm-1', api_key: '[REDACTED]' },
      },
      limitations: ['draft numbers'],
      createdByKind: 'agent',
      createdById: FINAL_OWNER,
      createdAt: now,
    });

    const invocation = await db.invocation.findUniqueOrThrow({ where: { id: 'inv_pub' } });
    expect(invocation).toMatchObject({
      state: 'completed',
      attention: 'none',
      attentionReason: null,
      blockers: [],
      completedAt: now,
    });
    expect(invocation.updatedAt.getTime()).toBeGreaterThanOrEqual(now.getTime() - 60_000);
    expect(await db.workflowRun.findUniqueOrThrow({ where: { invocationId: 'inv_pub' } })).toMatchObject({
      state: 'ended',
      endedAt: now,
    });
    const stages = await db.runStage.findMany({
      where: { invocationId: 'inv_pub' },
      orderBy: { position: 'asc' },
    });
    expect(stages[0]).toMatchObject({ state: 'completed', summary: 'collected' });
    expect(stages[1]).toMatchObject({
      state: 'completed',
      completedAt: now,
      lastHeartbeatAt: now,
      blockerReason: null,
      progress: 'half',
      summary: 'The weekly report, token=sk_live_abcdefghijklmnop',
      claimedAt: new Date(T0.getTime() + 2_500),
    });

    const evidence = await db.stageEvidence.findMany({
      where: { stageId: 'stg_inv_pub_1' },
      orderBy: { createdAt: 'asc' },
    });
    expect(evidence).toEqual([
      {
        id: expect.stringMatching(/^evd_/),
        stageId: 'stg_inv_pub_1',
        agentId: FINAL_OWNER,
        kind: 'log',
        content: { lines: ['built'], password: '[REDACTED]' },
        createdAt: new Date(now.getTime() - 2),
      },
      {
        id: expect.stringMatching(/^evd_/),
        stageId: 'stg_inv_pub_1',
        agentId: FINAL_OWNER,
        kind: 'link',
        content: 'https://example.test/report',
        createdAt: new Date(now.getTime() - 1),
      },
    ]);

    const events = await db.auditEvent.findMany({
      where: { targetId: { in: ['inv_pub', 'stg_inv_pub_1'] } },
      orderBy: { id: 'asc' },
    });
    const common = {
      workspaceId: WORKSPACE,
      projectId: PROJECT.id,
      actorKind: 'agent',
      actorId: FINAL_OWNER,
      requestId: 'req-inv_pub',
    };
    // Written in one statement, in the same millisecond: their ids do not order them.
    const byAction = (a: { action: string }, b: { action: string }) => a.action.localeCompare(b.action);
    expect(events.map(({ id: _id, createdAt: _at, ...event }) => event).sort(byAction)).toEqual([
      {
        ...common,
        action: 'artifact.published',
        targetType: 'invocation',
        targetId: 'inv_pub',
        data: { schema: 'report@1.0.0', artifact_id: stored.id, payload_sha256: stored.payloadHash },
      },
      {
        ...common,
        action: 'invocation.completed',
        targetType: 'invocation',
        targetId: 'inv_pub',
        data: { schema: 'report@1.0.0', artifact_id: stored.id },
      },
      {
        ...common,
        action: 'stage.completed',
        targetType: 'run_stage',
        targetId: 'stg_inv_pub_1',
        data: {
          invocation_id: 'inv_pub',
          stage_key: 'write',
          by: 'artifact_publication',
          duration_ms: 8_000,
        },
      },
    ]);

    const deliveries = await db.delivery.findMany({
      where: { invocationId: 'inv_pub' },
      orderBy: { subscriptionId: 'asc' },
    });
    const deliveryBody = JSON.stringify({
      type: 'invocation.completed',
      timestamp: now.toISOString(),
      data: {
        workspace_id: WORKSPACE,
        project_id: PROJECT.id,
        invocation_id: 'inv_pub',
        state: 'completed',
        attention: 'none',
        attention_reason: null,
        correlation_id: 'corr-inv_pub',
        artifact: {
          artifact_id: stored.id,
          schema_id: 'ars_pub',
          schema_name: 'report',
          schema_version: '1.0.0',
        },
      },
    });
    expect(deliveries.map(({ id: _id, seq: _seq, createdAt: _at, enqueuedAt: _enq, ...row }) => row)).toEqual(
      ['dsb_completed', 'dsb_only'].map((subscriptionId) => ({
        subscriptionId,
        workspaceId: WORKSPACE,
        projectId: PROJECT.id,
        invocationId: 'inv_pub',
        event: 'invocation.completed',
        subjectId: '',
        body: deliveryBody,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        lastStatusCode: null,
        failureReason: null,
        completedAt: null,
      })),
    );
    expect(deliveries.every((d) => d.id.startsWith('msg_') && d.enqueuedAt !== null)).toBe(true);
    expect(enqueued.map((job) => job.deliveryId).sort()).toEqual(deliveries.map((d) => d.id).sort());
    expect(enqueued.every((job) => job.trigger === 'scheduled' && job.invocationId === 'inv_pub')).toBe(true);
    expect(announced).toEqual(['inv_pub']);
    // BEGIN, the lock with the read, the write, COMMIT; the deliveries marked enqueued after the commit (before
    // decision 102: thirteen, each of the rows in a statement of its own).
    expect(statements).toBe(5);
  });

  test('when the same payload is published again, then the envelope is answered as a replay; another payload is refused', async () => {
    now = new Date(T0.getTime() + 20_000);
    const first = await database.prisma.artifact.findUniqueOrThrow({ where: { invocationId: 'inv_pub' } });
    await expect(publish('inv_pub', agent(FINAL_OWNER), body())).resolves.toEqual({
      artifact: first,
      replayed: true,
    });
    await expect(publish('inv_pub', agent(FINAL_OWNER), body('Other'))).rejects.toMatchObject({
      status: 409,
      code: 'artifact_already_published',
    });
    expect(await database.prisma.delivery.count({ where: { invocationId: 'inv_pub' } })).toBe(2);
  });

  test('when a payload does not match the schema, then it is kept as evidence and refused with 422, nothing published', async () => {
    await runningInvocation('inv_bad');
    now = new Date(T0.getTime() + 30_000);
    const error = await publish('inv_bad', agent(FINAL_OWNER), body(42)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 422, code: 'artifact_schema_mismatch' });
    const db = database.prisma;
    expect(await db.artifact.findUnique({ where: { invocationId: 'inv_bad' } })).toBeNull();
    expect(await db.artifactRejection.count({ where: { invocationId: 'inv_bad' } })).toBe(1);
    expect(await db.invocation.findUniqueOrThrow({ where: { id: 'inv_bad' } })).toMatchObject({
      state: 'running',
      attention: 'artifact_rejected',
    });
    expect(await db.stageEvidence.count({ where: { stageId: 'stg_inv_bad_1' } })).toBe(0);
  });

  test('when someone else publishes, then the problems are the same as before', async () => {
    await runningInvocation('inv_other');
    now = new Date(T0.getTime() + 40_000);
    await expect(publish('inv_other', agent('agt_stranger'), body())).rejects.toMatchObject({
      status: 403,
      code: 'stage_not_owned',
    });
    await expect(publish('inv_other', agent(FIRST_OWNER), body())).rejects.toMatchObject({
      status: 403,
      code: 'stage_not_owned',
    });
    await expect(publish('inv_missing', agent(FINAL_OWNER), body())).rejects.toMatchObject({
      status: 404,
      code: 'invocation_not_found',
    });
    // The first stage's owner without evidence: the envelope, the final stage left as it is.
    const { evidence: _evidence, ...withoutEvidence } = body();
    const published = await publish('inv_other', agent(FIRST_OWNER), withoutEvidence);
    expect(published.replayed).toBe(false);
    const final = await database.prisma.runStage.findUniqueOrThrow({ where: { id: 'stg_inv_other_1' } });
    expect(final).toMatchObject({ state: 'claimed', completedAt: null });
    expect(published.artifact.provenance).toMatchObject({
      stages: [
        { key: 'collect', completed_at: '2026-11-29T06:00:01.000Z' },
        { key: 'write', completed_at: null },
      ],
    });
    expect(
      await database.prisma.auditEvent.count({
        where: { targetId: 'stg_inv_other_1', action: 'stage.completed' },
      }),
    ).toBe(0);
  });

  test('when the final stage was completed before the publication, then it is left as it was and its evidence is kept', async () => {
    await runningInvocation('inv_waiting', 'completed');
    now = new Date(T0.getTime() + 50_000);
    const published = await publish('inv_waiting', agent(FINAL_OWNER), body());
    expect(published.replayed).toBe(false);
    const final = await database.prisma.runStage.findUniqueOrThrow({ where: { id: 'stg_inv_waiting_1' } });
    expect(final).toMatchObject({ state: 'completed', completedAt: null, blockerReason: 'waiting on data' });
    expect(await database.prisma.stageEvidence.count({ where: { stageId: 'stg_inv_waiting_1' } })).toBe(2);
    expect(
      await database.prisma.auditEvent.count({
        where: { targetId: 'stg_inv_waiting_1', action: 'stage.completed' },
      }),
    ).toBe(0);
  });

  test('when another writer changes the run while the publication waits for the lock, then what it read is not trusted: the publication is decided again on the latest rows', async () => {
    await runningInvocation('inv_race');
    now = new Date(T0.getTime() + 60_000);
    const other = await database.pool.connect();
    try {
      // Another writer holds the invocation's lock and gives the final stage to another agent.
      await other.query('BEGIN');
      await other.query('SELECT id FROM invocations WHERE id = $1 FOR UPDATE', ['inv_race']);
      await other.query("UPDATE run_stages SET owner_agent_id = 'agt_next' WHERE id = 'stg_inv_race_1'");
      const publishing = publish('inv_race', agent(FINAL_OWNER), body()).catch((e: unknown) => e);
      // The publication's read started before that commit and waits for the lock.
      // (Asked outside the writer's transaction: a transaction sees the activity as of its first look.)
      for (let waited = 0; ; waited += 1) {
        const { rows } = await database.pool.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND datname = current_database()`,
        );
        if (rows[0]!.waiting > 0) break;
        if (waited > 200) throw new Error('the publication never waited for the lock');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await other.query('COMMIT');
      // The agent no longer owns a stage of the invocation: refused, as when it asked after the change.
      expect(await publishing).toMatchObject({ status: 403, code: 'stage_not_owned' });
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      other.release();
    }
    const db = database.prisma;
    expect(await db.artifact.findUnique({ where: { invocationId: 'inv_race' } })).toBeNull();
    expect(await db.invocation.findUniqueOrThrow({ where: { id: 'inv_race' } })).toMatchObject({
      state: 'running',
    });
    expect(await db.stageEvidence.count({ where: { stageId: 'stg_inv_race_1' } })).toBe(0);
    expect(await db.auditEvent.count({ where: { targetId: 'inv_race' } })).toBe(0);
  });

  test('when the owner publishes the same payload twice at once, then one publication is made and the other answered as its replay', async () => {
    await runningInvocation('inv_twice');
    now = new Date(T0.getTime() + 70_000);
    const answers = await Promise.all([
      publish('inv_twice', agent(FINAL_OWNER), body()),
      publish('inv_twice', agent(FINAL_OWNER), body()),
    ]);
    expect(answers.map((a) => a.replayed).sort()).toEqual([false, true]);
    expect(answers[0]!.artifact).toEqual(answers[1]!.artifact);
    const db = database.prisma;
    expect(await db.artifact.count({ where: { invocationId: 'inv_twice' } })).toBe(1);
    expect(await db.stageEvidence.count({ where: { stageId: 'stg_inv_twice_1' } })).toBe(2);
    expect(await db.delivery.count({ where: { invocationId: 'inv_twice' } })).toBe(2);
    expect(await db.auditEvent.count({ where: { targetId: { in: ['inv_twice', 'stg_inv_twice_1'] } } })).toBe(
      3,
    );
  });
});
