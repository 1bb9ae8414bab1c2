import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HubInternalClient } from '@svc/contracts';
import { Webhook } from '@svc/sdk';
import type { WebhookEvent } from '@svc/sdk/webhooks';
import { createLogger, createRedis, createSecretBox, newId, parseSecretBoxKeys } from '@svc/service-kit';
import type { Redis } from '@svc/service-kit';
import { eventually, testRedisUrl } from '@svc/testing';
import { createDeliveryQueue } from '../src/data/delivery.queue';
import type { DeliveryQueue } from '../src/data/delivery.queue';
import { startWorkerProcess } from '../src/worker';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

/**
 * The delivery controls end to end: the Workflow API (with a real hub for keys), two worker processes' worth of
 * delivery consumers on the real Postgres and Redis (each with its own connections, rate limiter and caches, as
 * two replicas would have), and a real local HTTP receiver whose answers depend on the path it is sent to.
 * Deliveries are recorded as the engine records them (a row, then a job); the workers do the rest.
 */
jest.setTimeout(120_000);

const REDIS_URL = testRedisUrl();
const box = createSecretBox(parseSecretBoxKeys(`k1:${randomBytes(32).toString('base64')}`));
/** Retries after 300 ms and 300 ms: three attempts in all. */
const RETRIES_MS = [300, 300];

interface Hit {
  path: string;
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

let s: WorkflowTestStack;
let manager: string;
let receiver: Server;
let base = '';
const hits: Hit[] = [];
/** `/flaky`: how many more times each invocation id is answered 503. */
const flaky = new Map<string, number>();
let redis: Redis;
let queue: DeliveryQueue;
const workers: ReturnType<typeof startWorkerProcess>[] = [];
const connections: Redis[] = [];
/** Jobs each worker finished (by worker index). */
const finished = [0, 0];

function answer(path: string, body: string): { status: number; headers?: Record<string, string> } {
  switch (path) {
    case '/ok':
      return { status: 204 };
    case '/stop':
      return { status: 500, headers: { 'X-Svc-Stop-Retries': 'true' } };
    case '/down':
      return { status: 500 };
    case '/gone':
      return { status: 410 };
    case '/flaky': {
      const id = (JSON.parse(body) as { data: { invocation_id: string } }).data.invocation_id;
      const left = flaky.get(id) ?? 0;
      flaky.set(id, left - 1);
      return { status: left > 0 ? 503 : 204 };
    }
    default:
      return { status: 404 };
  }
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const { status, headers } = answer(path, body);
      hits.push({ path, at: Date.now(), headers: req.headers, body, status });
      res.writeHead(status, headers).end(status >= 400 ? `refused by ${path}` : undefined);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  s = await startWorkflowTestStack({ delivery: { secrets: box, allowLoopbackHttp: true } });
  manager = await s.key(['workflow-delivery:manage']);
  redis = createRedis(REDIS_URL);
  const logger = createLogger({ name: 'delivery-controls-test', level: 'silent' });
  queue = createDeliveryQueue({ connection: redis, prefix: s.queuePrefix, logger });
  for (let i = 0; i < 2; i++) {
    const connection = createRedis(REDIS_URL);
    connections.push(connection);
    const worker = startWorkerProcess({
      database: s.database,
      redis: connection,
      redisUrl: REDIS_URL,
      queuePrefix: s.queuePrefix,
      logger,
      hub: {} as HubInternalClient,
      delivery: { secrets: box, allowLoopbackHttp: true, retryScheduleMs: RETRIES_MS, timeoutMs: 5_000 },
      deliveryConcurrency: 20,
      sweeper: false,
    });
    for (const w of worker.workers) w.worker.on('completed', () => (finished[i]! += 1));
    workers.push(worker);
  }
}, 90_000);

afterAll(async () => {
  for (const worker of workers) await worker.close();
  for (const connection of connections) await connection.quit().catch(() => connection.disconnect());
  await queue?.close();
  await redis?.quit();
  await s?.close();
  await new Promise((resolve) => receiver?.close(resolve));
}, 60_000);

/** Parsed response JSON; the assertions check its shape. */
type Json = ReturnType<typeof JSON.parse>;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${s.url}/api/v1/projects/${s.project.id}/workflow${path}`, {
    method,
    headers: { 'x-api-key': manager, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function subscribe(
  path: string,
  extra: object = {},
  events: string[] = ['invocation.completed'],
): Promise<{ id: string; secret: string }> {
  const res = await call('POST', '/delivery-subscriptions', { url: `${base}${path}`, events, ...extra });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.subscription_id, secret: res.body.data.signing_secret };
}

/** Records `n` completion events for the subscription one after another (as the engine would) and queues them. */
async function seed(subscriptionId: string, n: number): Promise<{ ids: string[]; invocations: string[] }> {
  const ids: string[] = [];
  const invocations: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = newId('msg');
    const invocationId = newId('inv');
    const body = JSON.stringify({
      type: 'invocation.completed',
      timestamp: new Date().toISOString(),
      data: {
        workspace_id: s.workspace.id,
        project_id: s.project.id,
        invocation_id: invocationId,
        state: 'completed',
        attention: 'none',
        attention_reason: null,
        correlation_id: `order-${i}`,
        artifact: null,
      },
    });
    await s.database.pool.query(
      `INSERT INTO deliveries (id, subscription_id, workspace_id, project_id, invocation_id, event, body,
                               next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, 'invocation.completed', $6, now())`,
      [id, subscriptionId, s.workspace.id, s.project.id, invocationId, body],
    );
    ids.push(id);
    invocations.push(invocationId);
  }
  await queue.enqueue(ids.map((deliveryId) => ({ deliveryId, trigger: 'scheduled' as const })));
  return { ids, invocations };
}

const rowsOf = (subscriptionId: string) =>
  s.database.prisma.delivery.findMany({ where: { subscriptionId }, orderBy: { seq: 'asc' } });

const invocationOf = (hit: Hit) =>
  (JSON.parse(hit.body) as { data: { invocation_id: string } }).data.invocation_id;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a receiver stops the retries', () => {
  test('when a non-2xx answer carries X-Svc-Stop-Retries: true, then the delivery fails at once and the attempt says so', async () => {
    const sub = await subscribe('/stop');
    const { ids } = await seed(sub.id, 1);
    await eventually(async () => (await rowsOf(sub.id))[0]?.status === 'failed', 20_000, 'failed');
    // Retries would come 300 ms apart: wait past two of them.
    await sleep(1_000);
    expect(hits.filter((h) => h.path === '/stop')).toHaveLength(1);
    const detail = await call('GET', `/deliveries/${ids[0]}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      status: 'failed',
      attempts: 1,
      failure_reason: 'stopped_by_receiver',
      last_status_code: 500,
    });
    expect(detail.body.data.attempt_log).toEqual([
      expect.objectContaining({
        attempt: 1,
        status_code: 500,
        retries_stopped: true,
        response_snippet: 'refused by /stop',
      }),
    ]);
    // Stopping counts towards no disabling.
    const subscription = await call('GET', `/delivery-subscriptions/${sub.id}`);
    expect(subscription.body.data.is_active).toBe(true);
    expect(
      await s.database.prisma.deliverySubscription.findUniqueOrThrow({ where: { id: sub.id } }),
    ).toMatchObject({
      consecutiveExhaustions: 0,
    });
  });
});

describe('a rate-limited subscription', () => {
  test('when 15 deliveries are due at once under a limit of 5 a second, then two workers send them evenly spaced and none is dropped', async () => {
    const sub = await subscribe('/ok', { rate_limit_per_second: 5 });
    expect((await call('GET', `/delivery-subscriptions/${sub.id}`)).body.data.rate_limit_per_second).toBe(5);
    const before = [...finished];
    const { ids } = await seed(sub.id, 15);
    await eventually(
      async () => (await rowsOf(sub.id)).every((r) => r.status === 'succeeded'),
      30_000,
      'every delivery sent',
    );
    const arrivals = hits
      .filter((h) => h.path === '/ok' && ids.includes(h.headers['webhook-id'] as string))
      .map((h) => h.at)
      .sort((a, b) => a - b);
    expect(arrivals).toHaveLength(15); // one attempt each: waiting is not failing
    // 15 slots 200 ms apart: the last starts 2.8 s after the first.
    expect(arrivals[14]! - arrivals[0]!).toBeGreaterThanOrEqual(2_700);
    // In no second did the receiver see more than the limit (plus the one on the window's edge).
    for (const start of arrivals) {
      expect(arrivals.filter((t) => t >= start && t < start + 1_000).length).toBeLessThanOrEqual(6);
    }
    // Both workers sent some of them: the pacing is shared through Redis, not kept by each worker.
    expect(finished[0]! - before[0]!).toBeGreaterThan(0);
    expect(finished[1]! - before[1]!).toBeGreaterThan(0);
  });

  test('when the limit is removed, then the next deliveries go at once', async () => {
    const sub = await subscribe('/ok', { rate_limit_per_second: 1 });
    const patched = await call('PATCH', `/delivery-subscriptions/${sub.id}`, { rate_limit_per_second: null });
    expect(patched.body.data.rate_limit_per_second).toBeNull();
    const { ids } = await seed(sub.id, 6);
    await eventually(
      async () => (await rowsOf(sub.id)).every((r) => r.status === 'succeeded'),
      20_000,
      'every delivery sent',
    );
    const arrivals = hits.filter((h) => ids.includes(h.headers['webhook-id'] as string)).map((h) => h.at);
    expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeLessThan(2_000);
  });
});

describe('an ordered subscription', () => {
  test('when the first delivery is retried twice, then none of the later ones is attempted before it succeeds, and all arrive in order', async () => {
    const sub = await subscribe('/flaky', { ordered: true });
    const { invocations } = await seed(sub.id, 5);
    flaky.set(invocations[0]!, 2);
    flaky.set(invocations[2]!, 1);
    await eventually(
      async () => (await rowsOf(sub.id)).every((r) => r.status === 'succeeded'),
      30_000,
      'every delivery sent',
    );
    const seen = hits
      .filter((h) => h.path === '/flaky')
      .map((h) => ({ index: invocations.indexOf(invocationOf(h)), status: h.status }));
    // Every attempt, failures included, in order: the first three times, the third twice.
    expect(seen).toEqual([
      { index: 0, status: 503 },
      { index: 0, status: 503 },
      { index: 0, status: 204 },
      { index: 1, status: 204 },
      { index: 2, status: 503 },
      { index: 2, status: 204 },
      { index: 3, status: 204 },
      { index: 4, status: 204 },
    ]);
  });

  test('when a subscription is not ordered, then a retried delivery does not hold back the others', async () => {
    const sub = await subscribe('/flaky');
    const { invocations } = await seed(sub.id, 3);
    flaky.set(invocations[0]!, 1);
    await eventually(
      async () => (await rowsOf(sub.id)).every((r) => r.status === 'succeeded'),
      30_000,
      'every delivery sent',
    );
    const order = hits
      .filter((h) => h.path === '/flaky' && invocations.includes(invocationOf(h)) && h.status === 204)
      .map((h) => invocations.indexOf(invocationOf(h)));
    expect(order.indexOf(0)).toBe(2);
  });
});

describe('operational events', () => {
  test('when deliveries exhaust their retries and the subscription is disabled, then subscribers get signed, typed events and the audit has them', async () => {
    const watcher = await subscribe('/ok', {}, [
      'delivery.attempts_exhausted',
      'delivery_subscription.disabled',
    ]);
    const failing = await subscribe('/down');
    const { ids } = await seed(failing.id, 5);
    await eventually(
      async () => (await rowsOf(failing.id)).every((r) => r.status === 'failed'),
      30_000,
      'every delivery failed',
    );
    const rows = await rowsOf(failing.id);
    expect(rows.map((r) => [r.attempts, r.failureReason])).toEqual(ids.map(() => [3, 'retries_exhausted']));
    const subscription = await call('GET', `/delivery-subscriptions/${failing.id}`);
    expect(subscription.body.data).toMatchObject({ is_active: false, disabled_reason: 'retries_exhausted' });

    const webhook = new Webhook(watcher.secret, { dedupe: false });
    const received = async (): Promise<WebhookEvent[]> => {
      const events: WebhookEvent[] = [];
      for (const hit of hits.filter((h) => h.path === '/ok')) {
        const delivery = await webhook.verify(hit.body, hit.headers).catch(() => undefined);
        if (delivery) events.push(delivery.event);
      }
      return events.filter((e) => e.type !== 'invocation.completed');
    };
    const events = await eventually(
      async () => {
        const all = await received();
        return all.length >= 6 && all;
      },
      20_000,
      'six operational events',
    );
    const exhausted = events.filter((e) => e.type === 'delivery.attempts_exhausted');
    const disabled = events.filter((e) => e.type === 'delivery_subscription.disabled');
    expect(exhausted).toHaveLength(5);
    expect(disabled).toHaveLength(1);
    for (const event of exhausted) {
      if (event.type !== 'delivery.attempts_exhausted') throw new Error('narrowed by type');
      expect(event.data.delivery).toEqual({
        delivery_id: expect.any(String),
        subscription_id: failing.id,
        event: 'invocation.completed',
        attempts: 3,
        last_status_code: 500,
        last_error: null,
      });
    }
    expect(
      exhausted
        .map((e) => (e.type === 'delivery.attempts_exhausted' ? e.data.delivery?.delivery_id : ''))
        .sort(),
    ).toEqual([...ids].sort());
    const off = disabled[0]!;
    if (off.type !== 'delivery_subscription.disabled') throw new Error('narrowed by type');
    expect(off.data.subscription).toMatchObject({
      subscription_id: failing.id,
      reason: 'retries_exhausted',
      consecutive_exhaustions: 5,
    });
    // The events are deliveries like any other: listed under the watcher, with the invocation they concern.
    const listed = await call(
      'GET',
      `/deliveries?subscription_id=${watcher.id}&event=delivery.attempts_exhausted`,
    );
    expect(listed.body.data).toHaveLength(5);
    const audit = await s.database.prisma.auditEvent.findMany({ where: { projectId: s.project.id } });
    expect(
      audit
        .filter((a) => a.action === 'delivery.attempts_exhausted')
        .map((a) => a.targetId)
        .sort(),
    ).toEqual([...ids].sort());
    expect(
      audit.filter((a) => a.action === 'delivery_subscription.disabled' && a.targetId === failing.id),
    ).toHaveLength(1);

    // Replay everything since a time: enable the subscription on a working URL and send its failures again.
    const since = new Date(Date.now() - 60_000).toISOString();
    await call('PATCH', `/delivery-subscriptions/${failing.id}`, { url: `${base}/ok`, is_active: true });
    const replay = await call('POST', '/deliveries/replay', { since, subscription_id: failing.id });
    expect(replay).toMatchObject({ status: 202, body: { data: { replayed: 5 } } });
    await eventually(
      async () =>
        (await rowsOf(failing.id)).every((r) => r.status === 'succeeded' && r.failureReason === null),
      20_000,
      'every failure replayed',
    );
  });

  test('when an endpoint answers 410, then it is disabled as gone and the watchers are told', async () => {
    const watcher = await subscribe('/ok', {}, ['delivery_subscription.disabled']);
    const gone = await subscribe('/gone');
    await seed(gone.id, 1);
    const webhook = new Webhook(watcher.secret, { dedupe: false });
    const event = await eventually(
      async () => {
        for (const hit of hits.filter((h) => h.path === '/ok')) {
          const delivery = await webhook.verify(hit.body, hit.headers).catch(() => undefined);
          if (delivery?.event.type === 'delivery_subscription.disabled') return delivery.event;
        }
        return undefined;
      },
      20_000,
      'the disabled event',
    );
    expect(event.data.subscription).toMatchObject({ subscription_id: gone.id, reason: 'gone' });
    expect((await rowsOf(gone.id))[0]).toMatchObject({
      status: 'failed',
      failureReason: 'gone',
      attempts: 1,
    });
  });
});

describe('the test event', () => {
  test('when a test is sent, then the receiver gets a signed delivery_subscription.test and the answer is the attempt', async () => {
    const sub = await subscribe('/ok');
    const res = await call('POST', `/delivery-subscriptions/${sub.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      delivery_id: expect.stringMatching(/^msg_/),
      succeeded: true,
      status_code: 204,
      error: null,
      retries_stopped: false,
      body: {
        type: 'delivery_subscription.test',
        data: { subscription_id: sub.id, project_id: s.project.id },
      },
    });
    const hit = hits.find((h) => h.headers['webhook-id'] === res.body.data.delivery_id)!;
    const verified = await new Webhook(sub.secret).verify(hit.body, hit.headers);
    expect(verified.event).toEqual(res.body.data.body);
    // Nothing is stored as a delivery.
    expect(await rowsOf(sub.id)).toEqual([]);
  });

  test('when the receiver refuses with the stop header, then the answer says so; an unknown subscription is 404', async () => {
    const sub = await subscribe('/stop');
    const res = await call('POST', `/delivery-subscriptions/${sub.id}/test`);
    expect(res.body.data).toMatchObject({
      succeeded: false,
      status_code: 500,
      retries_stopped: true,
      response_snippet: 'refused by /stop',
    });
    const unknown = await call('POST', `/delivery-subscriptions/dsub_missing/test`);
    expect(unknown).toMatchObject({ status: 404, body: { code: 'delivery_subscription_not_found' } });
  });
});
