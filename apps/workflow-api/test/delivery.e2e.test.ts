import { randomBytes } from 'node:crypto';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { unwrap } from '@svc/contracts';
import { Webhook, Workflow } from '@svc/sdk';
import { createRedis } from '@svc/service-kit';
import { eventually, startRunStack, testRedisUrl } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { makeTestCertificate } from './support/tls-fixture';
import type { TestCertificate } from './support/tls-fixture';

/**
 * Signed delivery end to end: real hub, Workflow API, worker and reference agent; a local HTTPS receiver with a
 * certificate made for this test. The stack allows loopback endpoints (its development setting) so the receiver
 * can live on 127.0.0.1, trusts the test certificate, and retries on a schedule of fractions of a second.
 * Redis is shared with other suites, so this stack uses a database index of its own and "flush" is FLUSHDB on it.
 */
jest.setTimeout(120_000);

const REDIS_DB_URL = testRedisUrl(8);

interface Received {
  headers: Record<string, string>;
  body: string;
  answered: number;
}

class Receiver {
  server!: Server;
  url = '';
  received: Received[] = [];
  /**
   * When on, every delivery is answered 500 a few times before it is accepted: the n-th delivery id seen fails
   * 1 + (n mod 3) attempts, so about half of all requests fail and retries of one, two and three are exercised.
   * Deterministic on purpose: a random failure rate would exhaust a delivery's retries once in a few hundred runs.
   */
  failFirstAttempts = false;
  private failuresLeft = new Map<string, number>();
  /** Answer every request with this status instead (when set). */
  forced: number | null = null;

  async start(key: string, cert: string): Promise<void> {
    this.server = createServer({ key, cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = this.forced ?? (this.shouldFail(req.headers['webhook-id']) ? 500 : 204);
        if (req.url === '/redirect') {
          this.received.push({ headers: req.headers as Record<string, string>, body: '', answered: 302 });
          res.writeHead(302, { location: 'https://10.0.0.1/steal' }).end();
          return;
        }
        this.received.push({
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
          answered: status,
        });
        res.writeHead(status).end(status >= 400 ? 'try again' : undefined);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private shouldFail(deliveryId: string | string[] | undefined): boolean {
    if (!this.failFirstAttempts || typeof deliveryId !== 'string') return false;
    if (!this.failuresLeft.has(deliveryId))
      this.failuresLeft.set(deliveryId, 1 + (this.failuresLeft.size % 3));
    const left = this.failuresLeft.get(deliveryId)!;
    this.failuresLeft.set(deliveryId, left - 1);
    return left > 0;
  }

  delivered(): Received[] {
    return this.received.filter((r) => r.answered >= 200 && r.answered < 300);
  }
}

let s: RunStack<Database>;
let workflow: Workflow;
let receiver: Receiver;
let certificate: TestCertificate | undefined;

beforeAll(async () => {
  certificate = makeTestCertificate();
  receiver = new Receiver();
  await receiver.start(certificate.key, certificate.cert);
  s = await startRunStack({
    redisUrl: REDIS_DB_URL,
    database: (url) => createDatabase(url, { poolSize: 2 }),
    env: {
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_DELIVERY_CA_FILE: certificate.certFile,
      WORKFLOW_DELIVERY_RETRY_SCHEDULE: '0.1,0.2,0.2,0.3,0.3,0.5,0.5,0.5,0.5,0.5',
      WORKFLOW_DELIVERY_TIMEOUT_MS: '3000',
    },
  });
  workflow = new Workflow({
    baseUrl: s.workflowUrl,
    apiKey: s.apiKey,
    projectId: s.project.id,
    maxRetries: 0,
  });
  await s.addAgent(['report']);
}, 120_000);

afterAll(async () => {
  await s?.close();
  await new Promise((r) => receiver?.server.close(r));
  certificate?.remove();
}, 30_000);

async function subscribe(url: string, events: string[]) {
  const res = await s.wf.POST('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
    params: { path: { projectId: s.project.id } },
    body: { url, events: events as never },
  });
  return res;
}

async function runToCompletion(intent: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { invocation } = await workflow.invocations.create({ intent });
    await workflow.invocations.launch(invocation.invocation_id);
    ids.push(invocation.invocation_id);
  }
  for (const invocationId of ids) {
    await workflow.invocations.waitForArtifact(invocationId, { timeoutMs: 60_000, waitFor: 'all' });
  }
  return ids;
}

/** `eventually` within a minute; on a timeout it also says where every delivery stands (a lost event or slow retries). */
async function eventuallyDelivered(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  try {
    await eventually(check, 60_000, what, { intervalMs: 200 });
  } catch (error) {
    const rows = await s.database.prisma.delivery.findMany({
      select: { id: true, status: true, attempts: true, lastStatusCode: true, nextAttemptAt: true },
      orderBy: { createdAt: 'desc' },
      take: 20,
    });
    throw new Error(`${(error as Error).message}; latest deliveries: ${JSON.stringify(rows)}`, {
      cause: error,
    });
  }
}

describe('signed delivery', () => {
  test('a receiver failing half the time still gets every event; signatures verify with ours and with standardwebhooks', async () => {
    receiver.received = [];
    receiver.failFirstAttempts = true;
    const sub = unwrap(await subscribe(receiver.url, ['invocation.completed']));
    expect(sub.signing_secret).toMatch(/^whsec_/);
    const route = await s.seedRoute({ intent: 'delivered report' });
    const ids = await runToCompletion(route.intent, 12);
    await eventuallyDelivered('every completion delivered', () => {
      const seen = new Set(
        receiver
          .delivered()
          .map((r) => (JSON.parse(r.body) as { data: { invocation_id: string } }).data.invocation_id),
      );
      return ids.every((id) => seen.has(id));
    });
    // Every attempt of a delivery is verified, repeats included.
    const ours = new Webhook(sub.signing_secret, { dedupe: false });
    const theirs = new StandardWebhook(sub.signing_secret);
    const byDelivery = new Map<string, string[]>();
    for (const r of receiver.received) {
      const verified = await ours.verify(r.body, r.headers);
      expect(verified.id).toMatch(/^msg_/);
      expect(() => theirs.verify(r.body, r.headers)).not.toThrow();
      const event = verified.event;
      if (event.type === 'delivery_subscription.test') throw new Error('no test event was sent');
      expect(event.type).toBe('invocation.completed');
      expect(event.data.state).toBe('completed');
      expect(event.data.artifact).toMatchObject({ artifact_id: expect.stringMatching(/^art_/) });
      byDelivery.set(verified.id, [...(byDelivery.get(verified.id) ?? []), event.data.invocation_id]);
      expect(r.headers['x-svc-delivery-id']).toBe(r.headers['webhook-id']);
    }
    // One delivery id per event, the same in every attempt of it.
    expect(byDelivery.size).toBe(ids.length);
    for (const invocations of byDelivery.values()) expect(new Set(invocations).size).toBe(1);
    expect(receiver.received.length).toBeGreaterThan(ids.length); // some attempts failed and were retried
    const rows = await s.database.prisma.delivery.findMany({
      where: { subscriptionId: sub.subscription_id },
    });
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    receiver.failFirstAttempts = false;
    await s.wf.PATCH('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
      params: { path: { projectId: s.project.id, subscriptionId: sub.subscription_id } },
      body: { is_active: false },
    });
  });

  test('Redis flushed while deliveries wait for their retry: nothing is lost', async () => {
    receiver.received = [];
    receiver.forced = 503;
    const sub = unwrap(await subscribe(receiver.url, ['invocation.completed']));
    const route = await s.seedRoute({ intent: 'flushed delivery report' });
    const ids = await runToCompletion(route.intent, 5);
    await eventuallyDelivered('first failed attempts', () => receiver.received.length >= ids.length);
    const redis = createRedis(REDIS_DB_URL);
    try {
      await redis.flushdb();
    } finally {
      await redis.quit();
    }
    receiver.forced = null;
    await eventuallyDelivered('every completion delivered after the flush', async () => {
      const rows = await s.database.prisma.delivery.findMany({
        where: { subscriptionId: sub.subscription_id },
      });
      return rows.length === ids.length && rows.every((r) => r.status === 'succeeded');
    });
    await s.wf.PATCH('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
      params: { path: { projectId: s.project.id, subscriptionId: sub.subscription_id } },
      body: { is_active: false },
    });
  });

  test('exhausted deliveries are inspected, redelivered and replayed with the same delivery id', async () => {
    receiver.received = [];
    receiver.forced = 500;
    const sub = unwrap(await subscribe(receiver.url, ['invocation.completed']));
    const route = await s.seedRoute({ intent: 'exhausted delivery report' });
    const ids = await runToCompletion(route.intent, 2);
    await eventuallyDelivered('retries exhausted', async () => {
      const rows = await s.database.prisma.delivery.findMany({
        where: { subscriptionId: sub.subscription_id },
      });
      return rows.length === 2 && rows.every((r) => r.status === 'failed');
    });
    const failed = unwrap(
      await s.wf.GET('/api/v1/projects/{projectId}/workflow/deliveries', {
        params: {
          path: { projectId: s.project.id },
          query: { status: 'failed', subscription_id: sub.subscription_id },
        },
      }),
    );
    expect(failed.map((d) => d.invocation_id).sort()).toEqual([...ids].sort());
    const one = unwrap(
      await s.wf.GET('/api/v1/projects/{projectId}/workflow/deliveries/{deliveryId}', {
        params: { path: { projectId: s.project.id, deliveryId: failed[0]!.delivery_id } },
      }),
    );
    expect(one.attempt_log.length).toBe(11); // the first attempt and 10 retries
    expect(one.attempt_log.every((a) => a.status_code === 500)).toBe(true);
    expect(one.body).toMatchObject({ type: 'invocation.completed' });

    receiver.forced = null;
    receiver.received = [];
    const redelivered = await s.wf.POST(
      '/api/v1/projects/{projectId}/workflow/deliveries/{deliveryId}/redeliver',
      {
        params: { path: { projectId: s.project.id, deliveryId: failed[0]!.delivery_id } },
      },
    );
    expect(redelivered.response.status).toBe(202);
    const replay = unwrap(
      await s.wf.POST('/api/v1/projects/{projectId}/workflow/deliveries/replay', {
        params: { path: { projectId: s.project.id } },
        body: {
          since: new Date(Date.now() - 600_000).toISOString(),
          until: new Date(Date.now() + 1_000).toISOString(),
          subscription_id: sub.subscription_id,
        },
      }),
    );
    expect(replay.replayed).toBeGreaterThanOrEqual(1);
    await eventuallyDelivered('both delivered again', async () => {
      const rows = await s.database.prisma.delivery.findMany({
        where: { subscriptionId: sub.subscription_id },
      });
      return rows.every((r) => r.status === 'succeeded');
    });
    const ids2 = new Set(receiver.delivered().map((r) => r.headers['x-svc-delivery-id']));
    expect([...ids2].sort()).toEqual(failed.map((d) => d.delivery_id).sort());
    await s.wf.DELETE('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
      params: { path: { projectId: s.project.id, subscriptionId: sub.subscription_id } },
    });
  });

  test('410 Gone disables the subscription; a redirect is never followed', async () => {
    receiver.received = [];
    receiver.forced = 410;
    const gone = unwrap(await subscribe(receiver.url, ['invocation.completed']));
    const redirect = unwrap(await subscribe(`${receiver.url}/redirect`, ['invocation.completed']));
    const route = await s.seedRoute({ intent: 'gone delivery report' });
    await runToCompletion(route.intent, 1);
    await eventuallyDelivered('subscription disabled', async () => {
      const row = await s.database.prisma.deliverySubscription.findUnique({
        where: { id: gone.subscription_id },
      });
      return row?.isActive === false;
    });
    const after = unwrap(
      await s.wf.GET('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
        params: { path: { projectId: s.project.id, subscriptionId: gone.subscription_id } },
      }),
    );
    expect(after).toMatchObject({ is_active: false, disabled_reason: 'gone' });
    await eventuallyDelivered('redirect attempts recorded', async () => {
      const rows = await s.database.prisma.delivery.findMany({
        where: { subscriptionId: redirect.subscription_id },
      });
      return rows.length === 1 && rows[0]!.attempts >= 2;
    });
    const [row] = await s.database.prisma.delivery.findMany({
      where: { subscriptionId: redirect.subscription_id },
    });
    expect(row!.lastStatusCode).toBe(302);
    receiver.forced = null;
    await s.wf.DELETE('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
      params: { path: { projectId: s.project.id, subscriptionId: redirect.subscription_id } },
    });
  });

  test('SSRF: endpoints that resolve to private, metadata or other reserved addresses are refused at save', async () => {
    for (const url of [
      'https://10.1.2.3/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://192.168.1.10/',
      'https://[fd00::1]/',
      'http://example.com/hook',
      'https://user:pass@example.com/hook',
    ]) {
      const res = await subscribe(url, ['invocation.completed']);
      expect(res.response.status).toBe(400);
      expect((res.error as { code?: string }).code).toMatch(/^url_/);
    }
  });
});
