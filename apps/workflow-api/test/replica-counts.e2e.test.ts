import { Workflow } from '@svc/sdk';
import { metricValue, parseMetrics, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { expectEachCompletedOnce } from './support/completions';

/**
 * The run stack with a count per service (the scale-out bench compares 1 Workflow API and worker with 2 while
 * the hub stays one): two Workflow APIs behind HAProxy, one worker and one hub, and runs through them.
 */
jest.setTimeout(180_000);

let s: RunStack<Database>;

beforeAll(async () => {
  s = await startRunStack({
    hubs: 1,
    apis: 2,
    workers: 1,
    database: (url) => createDatabase(url, { poolSize: 2 }),
  });
  await s.addAgent(['counted']);
}, 180_000);

afterAll(async () => {
  await s?.close();
}, 60_000);

/** Requests a Workflow API replica has answered, from its own metrics. */
async function served(url: string): Promise<number> {
  const samples = parseMetrics(await (await fetch(`${url}/metrics`)).text());
  return metricValue(samples, 'svc_http_requests_total') ?? 0;
}

test('when counts are given per service, then the stack runs that many of each with HAProxy in front', () => {
  expect(s.replicas.hub).toHaveLength(1);
  expect(s.replicas.api).toHaveLength(2);
  expect(s.replicas.worker).toHaveLength(1);
  expect(s.loadBalancer).not.toBeNull();
  expect(s.replicas.api.map((r) => r.url)).not.toContain(s.workflowUrl);
  expect(s.hubUrl).not.toBe(s.replicas.hub[0]!.url);
  expect(new Set(s.replicas.api.map((r) => r.url)).size).toBe(2);
  expect(s.databaseUrls.workflow).toMatch(/^postgres/);
  expect(s.databaseUrls.hub).not.toBe(s.databaseUrls.workflow);
});

test('when runs go through two Workflow APIs and one worker, then both APIs serve them and each completes once', async () => {
  const route = await s.seedRoute({
    intent: 'counted report',
    stages: [{ key: 'one', title: 'One', required_capabilities: ['counted'] }],
  });
  const client = new Workflow({ baseUrl: s.workflowUrl, apiKey: s.apiKey, projectId: s.project.id });
  const before = await Promise.all(s.replicas.api.map((r) => served(r.url)));
  const ids = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const { invocation } = await client.invocations.create({ intent: route.intent });
      await client.invocations.launch(invocation.invocation_id);
      return invocation.invocation_id;
    }),
  );
  await expectEachCompletedOnce(client, s.database, ids, 90_000);
  const after = await Promise.all(s.replicas.api.map((r) => served(r.url)));
  expect(after[0]! - before[0]!).toBeGreaterThan(2);
  expect(after[1]! - before[1]!).toBeGreaterThan(2);
});
