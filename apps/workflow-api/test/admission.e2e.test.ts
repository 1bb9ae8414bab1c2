/**
 * Fair admission (decision 100) in the real app: while project A floods the Workflow API with requests, project
 * B's request is admitted ahead of A's line, and a held read gives up its slot while it only waits.
 */
import { randomBytes } from 'node:crypto';
import { newProject } from './support/invocations-fixtures';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

jest.setTimeout(120_000);

let s: WorkflowTestStack;
let projectA: { id: string };
let keyA: string;
let keyB: string;

beforeAll(async () => {
  // Two requests in flight in all, both usable by one project: B gets a slot only by its turn.
  s = await startWorkflowTestStack({
    admission: { maxInFlight: 2, maxInFlightPerKey: 2, queueTimeoutMs: 60_000 },
  });
  projectA = await newProject(s);
  keyA = await s.key(['workflows:run', 'workflows:read']);
  keyB = await s.otherProject.key(['workflow-contracts:read']);
}, 180_000);

afterAll(async () => {
  await s?.close();
});

const contractsOf = (projectId: string, apiKey: string) =>
  fetch(`${s.url}/api/v1/projects/${projectId}/workflow/contracts`, { headers: { 'x-api-key': apiKey } });
const listOf = (projectId: string, apiKey: string) =>
  fetch(`${s.url}/api/v1/projects/${projectId}/workflow/invocations`, { headers: { 'x-api-key': apiKey } });

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting until ${what}: ${JSON.stringify(s.service.admission.stats())}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('fair admission', () => {
  test("when project A has a long line of requests waiting, then project B's request is served before it", async () => {
    const FLOOD = 40;
    // Credentials are resolved (and cached) first, so both projects' requests reach the line at once.
    expect((await listOf(projectA.id, keyA)).status).toBe(200);
    expect((await contractsOf(s.otherProject.id, keyB)).status).toBe(200);

    // A's reads of its invocations are held up in Postgres: the two admitted ones hold both slots, and the rest
    // of A's flood waits in line — deterministically, whatever the machine's speed.
    const blocker = await s.database.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE "invocations" IN ACCESS EXCLUSIVE MODE');
    const order: string[] = [];
    const flood = Array.from({ length: FLOOD }, () =>
      listOf(projectA.id, keyA).then(async (res) => {
        await res.arrayBuffer();
        order.push('A');
        return res.status;
      }),
    );
    try {
      await until(() => s.service.admission.stats().queued === FLOOD - 2, "all but two of A's requests wait");
      // B reads its contracts (no lock in its way) but needs a slot like everyone.
      const b = contractsOf(s.otherProject.id, keyB).then(async (res) => {
        await res.arrayBuffer();
        order.push('B');
        return res.status;
      });
      await until(() => s.service.admission.stats().waitingKeys === 2, 'B waits too');
      expect(s.service.admission.stats()).toEqual({ inFlight: 2, queued: FLOOD - 1, waitingKeys: 2 });
      await blocker.query('COMMIT');
      expect(await b).toBe(200);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
    }
    const statuses = await Promise.all(flood);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // First come, first served would answer all 40 of A before B; the fair line gives B the first free slot,
    // so only A's two requests in flight when B arrived (and whatever started alongside B) are answered first.
    expect(order.indexOf('B')).toBeLessThanOrEqual(4);
    expect(order).toHaveLength(FLOOD + 1);
    expect(s.service.admission.stats()).toEqual({ inFlight: 0, queued: 0, waitingKeys: 0 });
  });

  test('when a read is held (?wait=), then it holds no slot while it waits, and answers after the wait', async () => {
    const created = await fetch(`${s.url}/api/v1/projects/${projectA.id}/workflow/invocations`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': keyA,
        'idempotency-key': `admission-${randomBytes(6).toString('hex')}`,
      },
      body: JSON.stringify({ intent: 'nothing matches this one' }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { data: { invocation_id: string } }).data.invocation_id;

    const heldReads = [1, 2, 3].map(() =>
      fetch(`${s.url}/api/v1/projects/${projectA.id}/workflow/invocations/${id}?wait=2`, {
        headers: { 'x-api-key': keyA },
      }),
    );
    // Three held reads and two slots: once they read the invocation they wait without one.
    await until(
      () => s.service.invocationWaits.size() === 3 && s.service.admission.stats().inFlight === 0,
      'three reads are held without a slot',
    );
    expect((await listOf(projectA.id, keyA)).status).toBe(200);
    for (const res of await Promise.all(heldReads)) expect(res.status).toBe(200);
    expect(s.service.admission.stats()).toEqual({ inFlight: 0, queued: 0, waitingKeys: 0 });
  });
});
