import { APIError, SvcError, Workflow } from '@svc/sdk';
import { startRunStack, testRedisUrl } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { expectEachCompletedOnce as expectCompletedOnce } from './support/completions';

/**
 * Two replicas of the hub, the Workflow API and the worker, on the same databases and Redis, behind HAProxy
 * with the project's configuration: requests reach every replica, and runs complete exactly once while one
 * replica of each service is killed with SIGKILL and started again.
 */
jest.setTimeout(180_000);

type Stack = RunStack<Database>;
let s: Stack;

beforeAll(async () => {
  s = await startRunStack({
    replicas: 2,
    redisUrl: testRedisUrl(8),
    database: (url) => createDatabase(url, { poolSize: 2 }),
    env: { WORKFLOW_STAGE_STALL_SECONDS: '20' },
  });
  await s.addAgent(['replicated']);
  await s.addAgent(['replicated']);
}, 180_000);

afterAll(async () => {
  await s?.close();
}, 60_000);

function workflow(): Workflow {
  return new Workflow({ baseUrl: s.workflowUrl, apiKey: s.apiKey, projectId: s.project.id });
}

/** Whether an error is the balancer or a dying replica, which a client retries. */
function transient(error: unknown): boolean {
  if (error instanceof APIError) return [502, 503, 504].includes(error.status);
  return error instanceof SvcError && !(error instanceof APIError);
}

/**
 * Invoke (the SDK repeats it under its idempotency key) and launch (idempotent on the server: repeated here when
 * a replica died with the request). Counts the repeats the caller made itself.
 */
async function invokeAndLaunch(intent: string, repeats: { launch: number }): Promise<string> {
  const client = workflow();
  const { invocation } = await client.invocations.create({ intent });
  for (let attempt = 1; ; attempt += 1) {
    try {
      await client.invocations.launch(invocation.invocation_id);
      return invocation.invocation_id;
    } catch (error) {
      if (attempt >= 5 || !transient(error)) throw error;
      repeats.launch += 1;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

function expectEachCompletedOnce(ids: string[]): Promise<void> {
  return expectCompletedOnce(workflow(), s.database, ids, 90_000);
}

/** Requests an API replica has served, from its own metrics. */
async function servedBy(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('svc_http_requests_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

test('when runs go through the balancer, then both Workflow API replicas serve them and each completes once', async () => {
  const route = await s.seedRoute({
    intent: 'replicated report',
    stages: [{ key: 'one', title: 'One', required_capabilities: ['replicated'] }],
  });
  const before = await Promise.all(s.replicas.api.map((r) => servedBy(r.url)));
  const repeats = { launch: 0 };
  const ids = await Promise.all(Array.from({ length: 8 }, () => invokeAndLaunch(route.intent, repeats)));
  await expectEachCompletedOnce(ids);
  const after = await Promise.all(s.replicas.api.map((r) => servedBy(r.url)));
  expect(after[0]! - before[0]!).toBeGreaterThan(4);
  expect(after[1]! - before[1]!).toBeGreaterThan(4);
  expect(repeats.launch).toBe(0);
});

test('when one replica of each service is killed with SIGKILL during a stream of runs, then every run completes exactly once', async () => {
  const route = await s.seedRoute({
    intent: 'killed replica report',
    stages: [
      { key: 'one', title: 'One', required_capabilities: ['replicated'] },
      { key: 'two', title: 'Two', required_capabilities: ['replicated'] },
    ],
  });
  const repeats = { launch: 0 };
  const ids: string[] = [];
  const faults: (() => Promise<void>)[] = [
    () => s.killReplica('api', 0),
    () => s.killReplica('worker', 1),
    () => s.killReplica('hub', 0),
    () => s.killReplica('api', 1),
    () => s.killReplica('worker', 0),
    () => s.killReplica('hub', 1),
  ];
  for (const fault of faults) {
    const burst = Promise.all(Array.from({ length: 3 }, () => invokeAndLaunch(route.intent, repeats)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await fault();
    ids.push(...(await burst));
  }
  await expectEachCompletedOnce(ids);
  // The balancer sent refused connections elsewhere; what reached a replica as it died was repeated.
  expect(repeats.launch).toBeLessThanOrEqual(faults.length * 3);
});
