import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Workflow } from '@svc/sdk';
import { eventually, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';

// Real processes on a shared 2-core machine: generous per-test bounds.
jest.setTimeout(120_000);

/**
 * A proxy between the Workflow API (and its worker) and the hub that, while `holding`, keeps roster reads
 * unanswered until released: a hub that answers slowly. It counts how many held reads are open at once.
 */
function slowHubProxy() {
  let target = '';
  let holding = false;
  const held = new Set<() => void>();
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    const forward = () => {
      const url = new URL(req.url ?? '/', target);
      const upstream = http.request(url, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    if (!holding || !/\/internal\/v1\/projects\/[^/]+\/roster/.test(req.url ?? '')) {
      forward();
      return;
    }
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      open -= 1;
      held.delete(release);
    };
    const release = () => {
      finish();
      if (!res.destroyed) forward();
    };
    held.add(release);
    // The caller gave up (its own timeout): the read is no longer open.
    res.on('close', finish);
  });
  return {
    async listen(hubUrl: string): Promise<string> {
      target = hubUrl;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const r of [...held]) r();
    },
    get maxOpen() {
      return maxOpen;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const proxy = slowHubProxy();
let s: RunStack<Database>;
let workflow: Workflow;
const POOL = 2;
/**
 * Eight routes whose stages need different capabilities: identical roster reads asked at once share one call
 * (decision 99), so only reads of different capability sets show how many reconciles wait on the hub at once.
 */
const ROUTES = Array.from({ length: 8 }, (_, i) => `slow hub report ${i}`);

beforeAll(async () => {
  s = await startRunStack({
    database: (url) => createDatabase(url, { poolSize: 2 }),
    workflowHubUrl: (hubUrl) => proxy.listen(hubUrl),
    // Each Workflow API process (and the worker) gets a pool of two connections.
    env: { WORKFLOW_DB_POOL_SIZE: String(POOL), WORKFLOW_RECONCILE_CONCURRENCY: '20' },
  });
  workflow = new Workflow({
    baseUrl: s.workflowUrl,
    apiKey: s.apiKey,
    projectId: s.project.id,
    maxRetries: 0,
  });
  await s.addAgent(['report', ...ROUTES.map((_, i) => `slow-${i}`)]);
}, 120_000);

afterAll(async () => {
  proxy.release();
  await s?.close();
  await proxy.close();
}, 30_000);

describe('the reconcile asks the hub outside its transaction', () => {
  test('when the hub answers slowly, then more reconciles wait on it at once than the pool has connections, the API keeps answering, and every run completes once it answers', async () => {
    for (const [i, intent] of ROUTES.entries()) {
      await s.seedRoute({
        intent,
        stages: [{ key: 'produce', title: 'Produce', required_capabilities: ['report', `slow-${i}`] }],
      });
    }
    proxy.hold();
    const launched: string[] = [];
    for (const intent of ROUTES) {
      const { invocation } = await workflow.invocations.create(
        { intent },
        { idempotencyKey: randomUUID(), correlationId: `corr-${randomUUID()}` },
      );
      await workflow.invocations.launch(invocation.invocation_id);
      launched.push(invocation.invocation_id);
    }
    // A reconcile holding a connection (or the invocation's row lock) while it waits on the hub would cap the
    // reads open at once at the worker's pool size.
    await eventually(
      async () => proxy.maxOpen > POOL,
      60_000,
      `more than ${POOL} roster reads held at once`,
      {
        describe: () => `at most ${proxy.maxOpen} held at once`,
      },
    );
    // Meanwhile the API, with its own pool of two, still reads and writes invocations.
    const listed = await Promise.all(launched.map((id) => workflow.invocations.get(id)));
    expect(listed.map((inv) => inv.invocation_id)).toEqual(launched);
    const cancelled = await workflow.invocations.cancel(launched[0]!, { reason: 'not needed' });
    expect(cancelled.state).toBe('cancelled');

    proxy.release();
    for (const id of launched.slice(1)) {
      const { invocation } = await workflow.invocations.waitForArtifact(id, {
        timeoutMs: 60_000,
        intervalMs: 100,
        waitFor: 'all',
      });
      expect(invocation.state).toBe('completed');
    }
    const first = await workflow.invocations.get(launched[0]!);
    expect(first.state).toBe('cancelled');
  });
});
