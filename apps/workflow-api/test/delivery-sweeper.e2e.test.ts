import { Queue } from 'bullmq';
import type { HubInternalClient } from '@svc/contracts';
import { createLogger, createMetricsRegistry, createRedis, newId } from '@svc/service-kit';
import type { Redis, Registry } from '@svc/service-kit';
import {
  createWorkflowDatabase,
  eventually,
  metricValue,
  obliterateQueues,
  parseMetrics,
  redisConnectionOptions,
  testRedisUrl,
  uniqueQueuePrefix,
} from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { DELIVERY_QUEUE, createDeliveryQueue } from '../src/data/delivery.queue';
import type { DeliveryJobData, DeliveryQueue } from '../src/data/delivery.queue';
import { RECONCILE_QUEUE } from '../src/data/reconcile.queue';
import { DELIVERY_SWEEP_BATCH } from '../src/use-cases/delivery/sweep-deliveries';
import { startWorkerProcess } from '../src/worker';

/**
 * The worker's sweeper under a delivery backlog, against the real Postgres and Redis: the worker process runs
 * its sweeper (every 100 ms, deliveries counted overdue after 500 ms) but no queue consumer, so every job it is
 * given stays queued. The backlog is larger than one sweep batch and long overdue. The sweeper must ask the
 * queue and leave every queued delivery alone, and re-dispatch exactly the ones whose job really vanished —
 * wherever they sit in the backlog — and nothing already settled. What it did is read from its metrics.
 */
jest.setTimeout(60_000);

const REDIS_URL = testRedisUrl();
const BACKLOG = DELIVERY_SWEEP_BATCH + 600;
const EVENT = 'invocation.completed';

let db: TestDatabase;
let database: Database;
let redis: Redis;
let prefix: string;
let registry: Registry;
let worker: ReturnType<typeof startWorkerProcess>;
let deliveries: DeliveryQueue;
let queue: Queue<DeliveryJobData>;
let ids: string[];
let settledId: string;
/** When the backlog was seeded (and, for the sweeper, last enqueued): a minute ago. */
let seededAt: Date;

async function counters() {
  const samples = parseMetrics(await registry.metrics());
  return {
    held: metricValue(samples, 'svc_workflow_sweeper_deliveries_checked_total', { queue: 'held' }) ?? NaN,
    missing:
      metricValue(samples, 'svc_workflow_sweeper_deliveries_checked_total', { queue: 'missing' }) ?? NaN,
    requeued: metricValue(samples, 'svc_workflow_sweeper_requeued_total', { kind: 'delivery' }) ?? NaN,
  };
}

type Counters = Awaited<ReturnType<typeof counters>>;

/** The counters once `done` holds for them; the last reading is in the error when it never does. */
async function countersWhen(what: string, done: (c: Counters) => boolean) {
  let last: Counters | undefined;
  return eventually(
    async () => {
      last = await counters();
      return done(last) && last;
    },
    30_000,
    what,
    { describe: () => `last counters: ${JSON.stringify(last)}` },
  );
}

/** Deliveries whose `enqueued_at` moved since seeding (the sweeper stamps what it re-dispatches). */
async function restamped(): Promise<string[]> {
  const { rows } = await database.pool.query<{ id: string }>(
    'SELECT id FROM deliveries WHERE enqueued_at IS DISTINCT FROM $1 ORDER BY id',
    [seededAt],
  );
  return rows.map((row) => row.id);
}

beforeAll(async () => {
  db = await createWorkflowDatabase();
  database = createDatabase(db.url, { poolSize: 4 });
  redis = createRedis(REDIS_URL);
  prefix = uniqueQueuePrefix('sweeptest');
  const logger = createLogger({ name: 'delivery-sweeper-test', level: 'silent' });

  // One subscription, a backlog of long-overdue pending deliveries and one already settled delivery.
  const subscriptionId = newId('dsub');
  const workspaceId = newId('ws');
  const projectId = newId('prj');
  await database.pool.query(
    `INSERT INTO delivery_subscriptions (id, workspace_id, project_id, url, events, description, secret_sealed)
     VALUES ($1, $2, $3, 'https://receiver.example/hook', $4, 'sweeper test', 'sealed')`,
    [subscriptionId, workspaceId, projectId, JSON.stringify([EVENT])],
  );
  seededAt = new Date(Date.now() - 60_000);
  ids = Array.from({ length: BACKLOG }, () => newId('msg'));
  await database.pool.query(
    `INSERT INTO deliveries (id, subscription_id, workspace_id, project_id, invocation_id, event, body, status,
                             next_attempt_at, enqueued_at)
     SELECT id, $2, $3, $4, 'inv_' || ord, $5, '{}', 'pending', $6::timestamptz + ord * interval '1 ms', $6
       FROM unnest($1::text[]) WITH ORDINALITY AS t(id, ord)`,
    [ids, subscriptionId, workspaceId, projectId, EVENT, seededAt],
  );
  settledId = newId('msg');
  await database.pool.query(
    `INSERT INTO deliveries (id, subscription_id, workspace_id, project_id, invocation_id, event, body, status,
                             attempts, next_attempt_at, enqueued_at, completed_at)
     VALUES ($1, $2, $3, $4, 'inv_settled', $5, '{}', 'succeeded', 1, NULL, $6, $6)`,
    [settledId, subscriptionId, workspaceId, projectId, EVENT, seededAt],
  );

  // Their jobs, queued as the service queues them; nobody consumes them during the test.
  deliveries = createDeliveryQueue({ connection: redis, prefix, logger });
  for (let at = 0; at < ids.length; at += 1000)
    expect(
      await deliveries.enqueue(
        ids.slice(at, at + 1000).map((deliveryId) => ({ deliveryId, trigger: 'scheduled' })),
      ),
    ).toBe(true);
  queue = new Queue<DeliveryJobData>(DELIVERY_QUEUE, {
    connection: redisConnectionOptions(REDIS_URL),
    prefix,
  });
  expect(await queue.getWaitingCount()).toBe(BACKLOG);

  worker = startSweeperOnly(logger);
});

/** A worker process running its sweeper and no queue consumer (so the backlog stays queued), with new metrics. */
function startSweeperOnly(logger: ReturnType<typeof createLogger>) {
  registry = createMetricsRegistry('workflow-worker', { processMetrics: false });
  return startWorkerProcess({
    database,
    redis,
    redisUrl: REDIS_URL,
    queuePrefix: prefix,
    logger,
    hub: {} as HubInternalClient,
    engine: { sweepIntervalMs: 100, outboxRedeliverMs: 500 },
    delivery: { secrets: null },
    definitions: [],
    metrics: registry,
  });
}

afterAll(async () => {
  await worker?.close();
  await queue?.close();
  await deliveries?.close();
  await redis?.quit().catch(() => redis.disconnect());
  await database?.close();
  if (prefix) await obliterateQueues(REDIS_URL, prefix, [DELIVERY_QUEUE, RECONCILE_QUEUE]);
  await db?.drop();
});

describe('the sweeper under a delivery backlog', () => {
  test('a queued backlog larger than a batch is looked at in full and never enqueued again', async () => {
    // Every queued delivery looked up at least twice (the passes walk the backlog batch by batch).
    const seen = await countersWhen('two looks at the backlog', (c) => c.held >= 2 * BACKLOG);
    expect(seen.missing).toBe(0);
    expect(seen.requeued).toBe(0);
    expect(await restamped()).toEqual([]);
    expect(await queue.getWaitingCount()).toBe(BACKLOG);
    // What was queued is untouched: the first job still carries what the service gave it.
    const first = await queue.getJob(ids[0]!);
    expect(first?.data).toEqual({ deliveryId: ids[0], trigger: 'scheduled' });
  });

  test('deliveries whose job vanished are re-dispatched, wherever they sit in the backlog, once', async () => {
    // One in the first batch, two beyond it (the sweeper reaches them on a later pass).
    const lost = [ids[5]!, ids[DELIVERY_SWEEP_BATCH + 100]!, ids[BACKLOG - 1]!].sort();
    for (const id of lost) expect(await queue.remove(id)).toBe(1);
    const before = await counters();

    const after = await countersWhen('the lost jobs re-dispatched', (c) => c.requeued >= 3);
    expect(after.requeued).toBe(3);
    expect(after.missing - before.missing).toBe(3);
    for (const id of lost) {
      const job = await queue.getJob(id);
      expect(job?.data).toMatchObject({ deliveryId: id, trigger: 'scheduled' });
    }
    expect(await restamped()).toEqual(lost);
    expect(await queue.getWaitingCount()).toBe(BACKLOG);
    // The settled delivery has no job and is never sent again.
    expect(await queue.getJob(settledId)).toBeUndefined();

    // More full walks of the backlog change nothing.
    const later = await countersWhen('two more looks', (c) => c.held >= after.held + 2 * BACKLOG);
    expect(later.requeued).toBe(3);
    expect(later.missing).toBe(after.missing);
    expect(await restamped()).toEqual(lost);
  });

  test('after Redis lost every job and the worker restarted, every pending delivery is re-dispatched once, then held', async () => {
    await worker.close();
    // Redis loss: the jobs' keys are gone (as after a flush or a failover without persistence).
    await queue.obliterate({ force: true });
    expect(await queue.getJob(ids[0]!)).toBeUndefined();
    worker = startSweeperOnly(createLogger({ name: 'delivery-sweeper-test', level: 'silent' }));
    // A new process starts from zero and from the oldest overdue delivery.
    const after = await countersWhen('the backlog re-dispatched', (c) => c.requeued >= BACKLOG);
    expect(after.requeued).toBe(BACKLOG);
    for (const id of ids.slice(0, 50)) expect(await queue.getJob(id)).toBeDefined();
    expect(await queue.getJob(settledId)).toBeUndefined();
    expect(await queue.getWaitingCount()).toBe(BACKLOG);
    // Held again after their grace, so nothing more is re-dispatched.
    const later = await countersWhen('a look at the whole backlog', (c) => c.held >= BACKLOG);
    expect(later.requeued).toBe(BACKLOG);
    expect(later.missing).toBe(BACKLOG);
  });
});
