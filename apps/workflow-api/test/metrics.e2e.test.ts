import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { unwrap } from '@svc/contracts';
import { Workflow } from '@svc/sdk';
import { eventually, freePort, metricValue, parseMetrics, startRunStack } from '@svc/testing';
import type { MetricSample, RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { DELIVERY_QUEUE } from '../src/data/delivery.queue';
import { RECONCILE_QUEUE } from '../src/data/reconcile.queue';

/**
 * `/metrics` of the hub, the Workflow API and its worker scraped during a real run: the built processes, a
 * reference agent, signed deliveries to a local receiver that fails the first attempt of each delivery. The
 * Workflow API runs with WORKFLOW_METRICS_PORT (metrics on a listener of their own, not on the public one);
 * the hub with the default (on its own listener).
 */
jest.setTimeout(60_000);

const RUNS = 2;

async function scrape(url: string): Promise<MetricSample[]> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return parseMetrics(await res.text());
}

/** A receiver answering 500 to the first attempt of each delivery and 204 to the next. */
class Receiver {
  server!: Server;
  url = '';
  readonly answered: number[] = [];
  private readonly seen = new Set<string>();

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        const status = this.seen.has(id) ? 204 : 500;
        this.seen.add(id);
        this.answered.push(status);
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }
}

let s: RunStack<Database>;
let receiver: Receiver;
let metricsUrl: string;

beforeAll(async () => {
  receiver = new Receiver();
  await receiver.start();
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  s = await startRunStack({
    database: (url) => createDatabase(url, { poolSize: 2 }),
    env: {
      WORKFLOW_METRICS_PORT: String(metricsPort),
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_DELIVERY_RETRY_SCHEDULE: '0.1,0.2,0.3',
      WORKFLOW_DELIVERY_TIMEOUT_MS: '3000',
    },
  });
  await s.addAgent(['report']);
  unwrap(
    await s.wf.POST('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
      params: { path: { projectId: s.project.id } },
      body: { url: receiver.url, events: ['invocation.completed'] as never },
    }),
  );
  const route = await s.seedRoute({ intent: 'measured report' });
  // No client retries: the request counts below are exact.
  const workflow = new Workflow({
    baseUrl: s.workflowUrl,
    apiKey: s.apiKey,
    projectId: s.project.id,
    maxRetries: 0,
  });
  const ids: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { invocation } = await workflow.invocations.create({ intent: route.intent });
    await workflow.invocations.launch(invocation.invocation_id);
    ids.push(invocation.invocation_id);
  }
  for (const invocationId of ids) {
    await workflow.invocations.waitForArtifact(invocationId, { timeoutMs: 30_000, waitFor: 'all' });
  }
  await eventually(
    () => receiver.answered.filter((status) => status === 204).length >= RUNS,
    20_000,
    'the deliveries',
    { describe: () => `answered: ${receiver.answered.join(',')}` },
  );
}, 60_000);

afterAll(async () => {
  await s?.close();
  await new Promise((resolve) => receiver?.server?.close(resolve));
}, 30_000);

describe('/metrics during a run', () => {
  test('hub: requests by operation id and status, and process metrics', async () => {
    const hub = await scrape(s.hubUrl);
    // The workflow engine read the roster and created a stage handoff through the internal API.
    expect(
      metricValue(hub, 'svc_http_requests_total', { operation: 'getProjectRoster', status: '200' }),
    ).toBeGreaterThan(0);
    expect(
      metricValue(hub, 'svc_http_requests_total', { operation: 'createStageHandoff' }),
    ).toBeGreaterThanOrEqual(RUNS);
    const count = metricValue(hub, 'svc_http_request_duration_seconds_count', {
      operation: 'getProjectRoster',
    });
    const sum = metricValue(hub, 'svc_http_request_duration_seconds_sum', { operation: 'getProjectRoster' });
    expect(count).toBe(metricValue(hub, 'svc_http_requests_total', { operation: 'getProjectRoster' }));
    expect(sum).toBeGreaterThan(0);
    expect(sum! / count!).toBeLessThan(5);
    // Labels hold operation ids, never raw paths (which would carry ids).
    const operations = new Set(
      hub.filter((x) => x.name === 'svc_http_requests_total').map((x) => x.labels.operation ?? ''),
    );
    for (const operation of operations) expect(operation).toMatch(/^[A-Za-z]+$/);
    expect(metricValue(hub, 'process_cpu_user_seconds_total', { service: 'hub-api' })).toBeGreaterThan(0);
    expect(metricValue(hub, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(metricValue(hub, 'nodejs_eventloop_lag_seconds')).toBeDefined();
  });

  test('Workflow API: on its metrics listener only; requests by operation and invocations by state', async () => {
    const publicAnswer = await fetch(`${s.workflowUrl}/metrics`);
    expect(publicAnswer.status).toBe(404);
    await publicAnswer.arrayBuffer();

    const wf = await scrape(metricsUrl);
    expect(metricValue(wf, 'svc_http_requests_total', { operation: 'createInvocation', status: '201' })).toBe(
      RUNS,
    );
    expect(metricValue(wf, 'svc_http_requests_total', { operation: 'launchInvocation', status: '202' })).toBe(
      RUNS,
    );
    expect(
      metricValue(wf, 'svc_http_requests_total', { operation: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(wf, 'svc_http_request_duration_seconds_count', { operation: 'createInvocation' }),
    ).toBe(RUNS);
    expect(metricValue(wf, 'svc_workflow_invocations', { state: 'completed', attention: 'none' })).toBe(RUNS);
    const rows = await s.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM invocations');
    expect(metricValue(wf, 'svc_workflow_invocations')).toBe(rows.rows[0]!.n);
    expect(metricValue(wf, 'process_cpu_user_seconds_total', { service: 'workflow-api' })).toBeGreaterThan(0);
  });

  test('worker (probe port): queue depth, job durations and failures, delivery attempts by outcome', async () => {
    const worker = await scrape(s.workerUrl);
    for (const queue of [RECONCILE_QUEUE, DELIVERY_QUEUE]) {
      for (const state of ['waiting', 'delayed', 'active', 'failed']) {
        expect(metricValue(worker, 'svc_queue_jobs', { queue, state })).toBeGreaterThanOrEqual(0);
      }
      expect(metricValue(worker, 'svc_queue_job_failures_total', { queue })).toBeGreaterThanOrEqual(0);
    }
    // A delivery whose receiver fails is rescheduled, not failed.
    expect(metricValue(worker, 'svc_queue_job_failures_total', { queue: DELIVERY_QUEUE })).toBe(0);
    expect(
      metricValue(worker, 'svc_queue_job_duration_seconds_count', {
        queue: RECONCILE_QUEUE,
        outcome: 'completed',
      }),
    ).toBeGreaterThanOrEqual(RUNS);
    // Each attempt the receiver failed moved its job to a later attempt; each success completed it.
    const succeeded = receiver.answered.filter((status) => status === 204).length;
    const failed = receiver.answered.filter((status) => status === 500).length;
    expect(succeeded).toBe(RUNS);
    expect(failed).toBeGreaterThanOrEqual(RUNS);
    expect(
      metricValue(worker, 'svc_queue_job_duration_seconds_count', {
        queue: DELIVERY_QUEUE,
        outcome: 'rescheduled',
      }),
    ).toBe(failed);
    expect(
      metricValue(worker, 'svc_queue_job_duration_seconds_count', {
        queue: DELIVERY_QUEUE,
        outcome: 'completed',
      }),
    ).toBe(succeeded);
    expect(metricValue(worker, 'svc_workflow_delivery_attempts_total', { outcome: 'succeeded' })).toBe(
      succeeded,
    );
    expect(metricValue(worker, 'svc_workflow_delivery_attempts_total', { outcome: 'http_5xx' })).toBe(failed);
    const latencyCount = metricValue(worker, 'svc_workflow_delivery_attempt_duration_seconds_count');
    expect(latencyCount).toBe(succeeded + failed);
    const latencySum = metricValue(worker, 'svc_workflow_delivery_attempt_duration_seconds_sum')!;
    expect(latencySum).toBeGreaterThan(0);
    expect(latencySum / latencyCount!).toBeLessThan(3);
    expect(
      metricValue(worker, 'svc_http_requests_total', { operation: 'workflowWorkerReadiness', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(worker, 'process_cpu_user_seconds_total', { service: 'workflow-worker' }),
    ).toBeGreaterThan(0);
  });
});
