/**
 * Completion without polling: `GET …/invocations/{id}?wait=<s>` held until the invocation's state or attention
 * changes, woken through the real Redis and confirmed in the real Postgres; bounded by the wait; released when
 * the caller goes away; and still answering, by re-reading the database, when Redis cannot be reached.
 */
import { randomBytes } from 'node:crypto';
import { createLogger, createRedis } from '@svc/service-kit';
import { createAnnouncements } from '../src/data/announcements.subscriber';
import { createInvocationChangeWaiter } from '../src/data/invocation-change.waiter';
import { getInvocation } from '../src/use-cases/invocations/get-invocation';
import { newProject } from './support/invocations-fixtures';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

let s: WorkflowTestStack;
let runKey: string;
let project: { id: string; code: string };

beforeAll(async () => {
  s = await startWorkflowTestStack();
  runKey = await s.key(['workflows:run', 'workflows:read']);
  project = await newProject(s);
}, 180_000);

afterAll(async () => {
  await s?.close();
});

interface InvocationBody {
  data: { invocation_id: string; state: string; attention: string };
}

async function invoke(): Promise<string> {
  const res = await fetch(`${s.url}/api/v1/projects/${project.id}/workflow/invocations`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': runKey,
      'idempotency-key': `wait-${randomBytes(6).toString('hex')}`,
    },
    body: JSON.stringify({ intent: 'nothing matches this one' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as InvocationBody).data.invocation_id;
}

function read(id: string, query: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${s.url}/api/v1/projects/${project.id}/workflow/invocations/${id}?${query}`, {
    headers: { 'x-api-key': runKey },
    ...(signal ? { signal } : {}),
  });
}

async function cancel(id: string): Promise<void> {
  const res = await fetch(`${s.url}/api/v1/projects/${project.id}/workflow/invocations/${id}/cancel`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': runKey },
    body: JSON.stringify({ reason: 'no longer needed' }),
  });
  expect(res.status).toBe(200);
}

/** Until the service holds `n` reads (the held request has started watching). */
async function held(n: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (s.service.invocationWaits.size() < n) {
    if (Date.now() > until)
      throw new Error(`expected ${n} held read(s), have ${s.service.invocationWaits.size()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('GET /workflow/invocations/{id}?wait=', () => {
  test('when the state changes during the wait, then the held read answers with the new state within about 100 ms', async () => {
    const id = await invoke();
    const answered: number[] = [];
    const started = Date.now();
    const pending = read(id, 'wait=30').then(async (res) => {
      answered.push(Date.now());
      return { status: res.status, body: (await res.json()) as InvocationBody };
    });
    await held(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toEqual([]); // still held: nothing changed yet
    await cancel(id);
    const cancelledAt = Date.now();
    const { status, body } = await pending;
    const latency = answered[0]! - cancelledAt;
    process.stdout.write(`held read answered ${latency} ms after the cancel was answered\n`);
    expect(status).toBe(200);
    expect(body.data.state).toBe('cancelled');
    expect(answered[0]! - started).toBeLessThan(30_000);
    // The push wakes it: without it the next re-read would be seconds away.
    expect(latency).toBeLessThan(1_000);
    expect(s.service.invocationWaits.size()).toBe(0);
  });

  test('when nothing changes, then the read answers at the end of the wait with the state unchanged', async () => {
    const id = await invoke();
    const started = Date.now();
    const res = await read(id, 'wait=1');
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(((await res.json()) as InvocationBody).data.state).toBe('received');
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(5_000);
    expect(s.service.invocationWaits.size()).toBe(0);
  });

  test('when the caller already saw another state, or the invocation is terminal, then it answers at once', async () => {
    const id = await invoke();
    let started = Date.now();
    const differs = await read(id, 'wait=30&state=launching&attention=none');
    expect(((await differs.json()) as InvocationBody).data.state).toBe('received');
    expect(Date.now() - started).toBeLessThan(5_000);
    await cancel(id);
    started = Date.now();
    const terminal = await read(id, 'wait=30&state=cancelled');
    expect(((await terminal.json()) as InvocationBody).data.state).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('when the caller goes away, then its held read is released', async () => {
    const id = await invoke();
    const controller = new AbortController();
    const pending = read(id, 'wait=30', controller.signal).catch((error: unknown) => error);
    await held(1);
    controller.abort();
    expect(((await pending) as { name?: string }).name).toBe('AbortError');
    const until = Date.now() + 5_000;
    while (s.service.invocationWaits.size() > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(s.service.invocationWaits.size()).toBe(0);
  });

  test('when the wait is out of bounds or the invocation unknown, then 400 validation_failed and 404', async () => {
    const id = await invoke();
    for (const query of ['wait=61', 'wait=-1', 'wait=soon', 'wait=5&state=done']) {
      const res = await read(id, query);
      expect([query, res.status, ((await res.json()) as { code: string }).code]).toEqual([
        query,
        400,
        'validation_failed',
      ]);
    }
    const missing = await read('inv_doesnotexist', 'wait=5');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('invocation_not_found');
  });
});

describe('a held read without Redis', () => {
  test('when the subscription cannot connect, then a change is still seen within about a second by re-reading Postgres', async () => {
    // A subscriber on a port nothing listens on: announcements never arrive.
    const announcements = createAnnouncements({
      subscriber: createRedis('redis://127.0.0.1:5499', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => 1_000,
      }),
      logger: createLogger({ name: 'wait-test', level: 'silent' }),
    });
    const deaf = createInvocationChangeWaiter({ announcements, prefix: s.queuePrefix });
    try {
      const id = await invoke();
      const started = Date.now();
      const pending = getInvocation(s.service.deps, project.id, id, {
        wait: { seconds: 20 },
        waiter: deaf,
      }).then((view) => ({ view, at: Date.now() }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(deaf.listening()).toBe(false);
      await cancel(id);
      const cancelledAt = Date.now();
      const { view, at } = await pending;
      expect(view.invocation.state).toBe('cancelled');
      expect(at - cancelledAt).toBeLessThan(2_500);
      expect(at - started).toBeLessThan(20_000);
      expect(deaf.size()).toBe(0);
    } finally {
      await announcements.close();
    }
  });
});
