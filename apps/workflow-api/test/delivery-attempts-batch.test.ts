import { newId } from '@svc/service-kit';
import { createWorkflowDatabase } from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { createDeliveryAttemptStore } from '../src/data/delivery-attempts.batch';
import type { AttemptRecord } from '../src/data/delivery-attempts.batch';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { microBatcher } from '../src/domain/micro-batch';
import type { Settled } from '../src/domain/micro-batch';

/**
 * The statements shared by concurrent delivery attempts: the group-commit function on its own, then the store
 * against the real Postgres (one read and one write for many attempts, each attempt its own outcome).
 */
/** A few turns of the event loop: whatever a settled batch scheduled has started. */
const turns = async () => {
  for (let i = 0; i < 3; i += 1) await new Promise((r) => setImmediate(r));
};

describe('microBatcher', () => {
  test('calls made while a batch runs go together in the next one; each caller gets its own value', async () => {
    const batches: number[][] = [];
    const releases: (() => void)[] = [];
    const call = microBatcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      run: async (items) => {
        batches.push(items);
        await new Promise<void>((resolve) => releases.push(resolve));
        return items.map((n) => ({ ok: true, value: n * 2 }));
      },
    });
    const first = call(1);
    await turns();
    const rest = [2, 3, 4].map(call);
    await turns();
    expect(batches).toEqual([[1]]);
    releases.shift()!();
    expect(await first).toBe(2);
    await turns();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    releases.shift()!();
    expect(await Promise.all(rest)).toEqual([4, 6, 8]);
  });

  test('a batch holds at most maxBatch items and one item per key', async () => {
    const batches: string[][] = [];
    const call = microBatcher<string, string>({
      maxBatch: 3,
      maxInFlight: 1,
      key: (item) => item.split(':')[0]!,
      run: async (items) => {
        batches.push(items);
        return items.map((item) => ({ ok: true, value: item }));
      },
    });
    await Promise.all(['a:1', 'a:2', 'b:1', 'c:1', 'd:1'].map(call));
    expect(batches).toEqual([
      ['a:1', 'b:1', 'c:1'],
      ['a:2', 'd:1'],
    ]);
  });

  test('an item that failed fails its caller only; a batch that failed fails all its callers', async () => {
    let fail = false;
    const call = microBatcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      run: async (items) => {
        if (fail) throw new Error('batch down');
        return items.map((n): Settled<number> =>
          n < 0 ? { ok: false, error: new Error(`bad ${n}`) } : { ok: true, value: n },
        );
      },
    });
    const outcomes = await Promise.allSettled([1, -2, 3].map(call));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    fail = true;
    const down = await Promise.allSettled([4, 5].map(call));
    expect(down.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.value))).toEqual([
      'batch down',
      'batch down',
    ]);
  });
});

describe('the delivery attempt store (Postgres)', () => {
  let db: TestDatabase;
  let database: Database;
  const subscriptionId = newId('dsub');

  beforeAll(async () => {
    db = await createWorkflowDatabase();
    database = createDatabase(db.url, { poolSize: 3 });
    await database.pool.query(
      `INSERT INTO delivery_subscriptions (id, workspace_id, project_id, url, events, description, secret_sealed)
       VALUES ($1, 'ws_1', 'prj_1', 'https://receiver.example/hook', '["invocation.completed"]', 'store test',
               'sealed')`,
      [subscriptionId],
    );
  });

  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  async function seed(n: number): Promise<string[]> {
    const ids = Array.from({ length: n }, () => newId('msg'));
    await database.pool.query(
      `INSERT INTO deliveries (id, subscription_id, workspace_id, project_id, invocation_id, event, body,
                               next_attempt_at)
       SELECT id, $2, 'ws_1', 'prj_1', 'inv_' || id, 'invocation.completed', '{"n":' || ord || '}', now()
         FROM unnest($1::text[]) WITH ORDINALITY AS t(id, ord)`,
      [ids, subscriptionId],
    );
    return ids;
  }

  const record = (deliveryId: string, over: Partial<AttemptRecord> = {}): AttemptRecord => ({
    attemptId: newId('dat'),
    deliveryId,
    attempt: 1,
    trigger: 'scheduled',
    startedAt: new Date(),
    statusCode: 204,
    latencyMs: 3,
    error: null,
    responseSnippet: '',
    retriesStopped: false,
    status: 'succeeded',
    failureReason: null,
    nextAttemptAt: null,
    completedAt: new Date(),
    ...over,
  });

  test('concurrent reads and records share statements; every delivery gets its own row and state', async () => {
    const ids = await seed(60);
    const store = createDeliveryAttemptStore(database.pool);
    const statements: string[] = [];
    const query = database.pool.query.bind(database.pool);
    const spy = jest.spyOn(database.pool, 'query').mockImplementation(((text: string, values: unknown) => {
      statements.push(text);
      return query(text, values as unknown[]);
    }) as typeof database.pool.query);
    try {
      const rows = await Promise.all([...ids, newId('msg')].map((id) => store.read(id)));
      expect(rows.slice(0, -1).map((row) => row?.id)).toEqual(ids);
      expect(rows[rows.length - 1]).toBeUndefined();
      expect(rows[0]).toMatchObject({
        status: 'pending',
        attempts: 0,
        body: '{"n":1}',
        subscription_id: subscriptionId,
      });
      const retryAt = new Date(Date.now() + 5_000);
      await Promise.all(
        ids.map((id, i) =>
          store.record(
            i % 2 === 0
              ? record(id)
              : record(id, {
                  statusCode: 503,
                  responseSnippet: `busy ${i}, "quoted" {braces} \\ back`,
                  status: 'pending',
                  nextAttemptAt: retryAt,
                  completedAt: null,
                }),
          ),
        ),
      );
      // Far fewer statements than attempts (the first call of each kind goes alone, the rest together).
      expect(statements.length).toBeLessThanOrEqual(6);
    } finally {
      spy.mockRestore();
    }
    const { rows } = await database.pool.query<{
      id: string;
      status: string;
      attempts: number;
      last_status_code: number;
      next_attempt_at: Date | null;
      snippet: string;
    }>(
      `SELECT d.id, d.status, d.attempts, d.last_status_code, d.next_attempt_at, a.response_snippet AS snippet
         FROM deliveries d JOIN delivery_attempts a ON a.delivery_id = d.id
        WHERE d.id = ANY($1::text[])`,
      [ids],
    );
    expect(rows).toHaveLength(ids.length);
    const byId = new Map(rows.map((row) => [row.id, row]));
    ids.forEach((id, i) => {
      const row = byId.get(id)!;
      if (i % 2 === 0) expect(row).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 204 });
      else
        expect(row).toMatchObject({
          status: 'pending',
          attempts: 1,
          last_status_code: 503,
          snippet: `busy ${i}, "quoted" {braces} \\ back`,
        });
    });
  });

  test('a record Postgres refuses fails its own attempt only', async () => {
    const ids = await seed(5);
    const store = createDeliveryAttemptStore(database.pool);
    const outcomes = await Promise.allSettled(
      ids.map((id, i) => store.record(record(id, i === 2 ? { responseSnippet: 'nul \u0000 byte' } : {}))),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    const { rows } = await database.pool.query<{ id: string; status: string }>(
      'SELECT id, status FROM deliveries WHERE id = ANY($1::text[])',
      [ids],
    );
    const status = new Map(rows.map((row) => [row.id, row.status]));
    expect(ids.map((id) => status.get(id))).toEqual([
      'succeeded',
      'succeeded',
      'pending',
      'succeeded',
      'succeeded',
    ]);
  });
});
