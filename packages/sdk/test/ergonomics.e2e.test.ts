/**
 * The SDK's ergonomics against a real stack (hub, Workflow API, worker, a reference agent): lists are real
 * Promises and async iterables that fetch every page; per-request AbortSignal, timeout and idempotency key; a
 * handle started in one client, persisted by its id and resumed in another, whose `result()` waits on the
 * server (held reads, `?wait=`) instead of polling. Every request the SDK sends is recorded through its `fetch`
 * option, so the pages fetched and the reads held are counted, not assumed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import {
  APIError,
  APITimeoutError,
  ArgumentError,
  IdempotencyError,
  NotFoundError,
  Page,
  Workflow,
} from '../src/index';

jest.setTimeout(240_000);

let stack: RunStack;
let intent: string;
let schemaName: string;
let approvalIntent: string;
const sent: URL[] = [];

/** A client whose every request is recorded. */
function client(options: { record?: URL[] } = {}) {
  const record = options.record ?? sent;
  return new Workflow({
    baseUrl: stack.workflowUrl,
    apiKey: stack.apiKey,
    projectId: stack.project.id,
    fetch: (request) => {
      record.push(new URL(request.url));
      return fetch(request);
    },
  });
}

beforeAll(async () => {
  stack = await startRunStack({
    env: {
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_STAGE_STALL_SECONDS: '120',
    },
  });
  const route = await stack.seedRoute({ intent: 'ergonomics report' });
  intent = `${route.intent} for the SDK`;
  schemaName = route.schemaName;
  approvalIntent = `${(await stack.seedRoute({ intent: 'ergonomics approval', approval: true })).intent} now`;
  await stack.addAgent([]);
}, 300_000);

afterAll(async () => {
  await stack?.close();
}, 60_000);

describe('lists', () => {
  const created: string[] = [];

  beforeAll(async () => {
    const workflow = client();
    for (let i = 0; i < 5; i += 1) {
      const { invocation } = await workflow.invocations.create({ intent: `${intent} #${i}` });
      created.push(invocation.invocation_id);
    }
  });

  test('when a list is called, then it is a real Promise: then, catch and finally work and answer plain Promises', async () => {
    const workflow = client();
    const listed = workflow.invocations.list({ limit: 2 });
    expect(listed).toBeInstanceOf(Promise);
    const then = listed.then((page) => page.data.length);
    expect(then.constructor).toBe(Promise);
    expect(await then).toBe(2);
    expect(await listed).toBeInstanceOf(Page);
    let finished = false;
    await workflow.invocations.list({ limit: 1 }).finally(() => (finished = true));
    expect(finished).toBe(true);
    // A failure reaches `.catch` as a typed error with its code (the project does not exist).
    const caught = await workflow.invocations
      .list({}, { projectId: 'prj_doesnotexist' })
      .catch((error: unknown) => error);
    expect(caught).toBeInstanceOf(APIError);
    expect((caught as APIError).code).toEqual(expect.any(String));
    expect([403, 404]).toContain((caught as APIError).status);
    // So does a call the SDK refuses before sending (no project id): the list rejects, it does not throw.
    const unsent = new Workflow({ baseUrl: stack.workflowUrl, apiKey: stack.apiKey });
    const refused = await unsent.invocations.list().catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'project_id_required' });
  });

  test('when a list is iterated with for await, then every page is fetched as the loop goes on', async () => {
    const record: URL[] = [];
    const workflow = client({ record });
    const seen: string[] = [];
    for await (const invocation of workflow.invocations.list({ limit: 2 }))
      seen.push(invocation.invocation_id);
    expect(seen).toEqual(expect.arrayContaining(created));
    expect(new Set(seen).size).toBe(seen.length);
    const pages = record.filter((url) => url.pathname.endsWith('/workflow/invocations'));
    // One request per page of two (a last full page may point to an empty one).
    expect(pages.length).toBeGreaterThanOrEqual(Math.max(3, Math.ceil(seen.length / 2)));
    expect(pages.length).toBeLessThanOrEqual(Math.ceil(seen.length / 2) + 1);
    expect(pages.slice(1).every((url) => url.searchParams.get('cursor'))).toBe(true);
  });

  test('when toArray({ limit }) is asked for 3 items of 2-item pages, then it fetches two pages and answers 3', async () => {
    const record: URL[] = [];
    const workflow = client({ record });
    const items = await workflow.invocations.list({ limit: 2 }).toArray({ limit: 3 });
    expect(items).toHaveLength(3);
    expect(record.filter((url) => url.pathname.endsWith('/workflow/invocations'))).toHaveLength(2);
    await expect(workflow.invocations.list().toArray({ limit: 0 })).rejects.toMatchObject({
      code: 'argument_invalid',
      argument: 'limit',
    });
    await expect(workflow.invocations.list().toArray({ limit: 0 })).rejects.toBeInstanceOf(ArgumentError);
  });
});

describe('per-request options', () => {
  test('when a held read is aborted by its signal, then it rejects at once with the signal’s reason', async () => {
    const workflow = client();
    const { invocation } = await workflow.invocations.create({ intent });
    const controller = new AbortController();
    const began = Date.now();
    const pending = workflow.invocations.waitForChange(invocation.invocation_id, {
      waitSeconds: 30,
      seen: { state: invocation.state, attention: invocation.attention },
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('the caller stopped waiting')), 300);
    await expect(pending).rejects.toThrow('the caller stopped waiting');
    expect(Date.now() - began).toBeLessThan(15_000);
  });

  test('when a call has its own timeout, then only that call times out, with code timeout and the host', async () => {
    const workflow = client();
    const { invocation } = await workflow.invocations.create({ intent });
    const error = await workflow.invocations
      .get(invocation.invocation_id, { timeoutMs: 1, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toMatchObject({ code: 'timeout', host: new URL(stack.workflowUrl).host });
    // The client's own timeout still applies to the next call.
    expect((await workflow.invocations.get(invocation.invocation_id)).invocation_id).toBe(
      invocation.invocation_id,
    );
  });

  test('when a create repeats its idempotency key, then the same invocation comes back; another request with it is refused', async () => {
    const workflow = client();
    const idempotencyKey = randomUUID();
    const first = await workflow.invocations.create({ intent }, { idempotencyKey });
    const again = await client().invocations.create({ intent }, { idempotencyKey });
    expect(first.replayed).toBe(false);
    expect(again.replayed).toBe(true);
    expect(again.invocation.invocation_id).toBe(first.invocation.invocation_id);
    const other = await workflow.invocations
      .create({ intent: `${intent}, another one` }, { idempotencyKey })
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(IdempotencyError);
    expect((other as IdempotencyError).code).toMatch(/^idempotency_/);
    const record: URL[] = [];
    await client({ record }).invocations.create({ intent }, { idempotencyKey: randomUUID() });
    expect(record).toHaveLength(1);
  });
});

describe('handles', () => {
  test('when a run is started, its id persisted and resumed by another client, then result() waits on the server and verifies the payload', async () => {
    const idempotencyKey = randomUUID();
    const handle = await client().start(intent, { idempotencyKey });
    expect(handle.id).toMatch(/^inv_/);
    expect(handle.started?.replayed).toBe(false);
    const persisted = JSON.stringify({ id: handle.id });

    // Later, in another process: only the id is known.
    const record: URL[] = [];
    const resumed = client({ record }).handle((JSON.parse(persisted) as { id: string }).id);
    const result = await resumed.result<{ title: string }>({
      timeoutMs: 120_000,
      schema: { name: schemaName, versions: ['1.0.0'] },
    });
    expect(result.invocation).toMatchObject({ invocation_id: handle.id, state: 'completed' });
    expect(result.payload.title).toEqual(expect.any(String));
    expect(result.envelope.invocation_id).toBe(handle.id);
    // The first read learns the state; each read after it was held by the server (`?wait=`, with the state
    // last seen) until the invocation changed: one per change of state or attention, not one per interval.
    const reads = record.filter((url) => url.pathname.endsWith(`/invocations/${handle.id}`));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads[0]!.searchParams.get('wait')).toBeNull();
    for (const held of reads.slice(1)) {
      expect(Number(held.searchParams.get('wait'))).toBeGreaterThan(0);
      expect(held.searchParams.get('state')).toEqual(expect.any(String));
    }
    expect(reads.length).toBeLessThanOrEqual(8);
    process.stdout.write(`handle.result(): ${reads.length} reads of the invocation\n`);

    // Starting again with the stored key resumes the same run instead of a second one.
    const again = await client().start(intent, { idempotencyKey });
    expect(again.id).toBe(handle.id);
    expect(again.started?.replayed).toBe(true);
    expect((await again.get()).state).toBe('completed');
  });

  test('when result() waits through an approval, then one read is held by the server until the decision', async () => {
    const handle = await client().start(approvalIntent);
    const timed: { url: URL; ms: number }[] = [];
    const waiting = new Workflow({
      baseUrl: stack.workflowUrl,
      apiKey: stack.apiKey,
      projectId: stack.project.id,
      fetch: async (request) => {
        const began = Date.now();
        const answer = await fetch(request);
        timed.push({ url: new URL(request.url), ms: Date.now() - began });
        return answer;
      },
    });
    const pending = waiting.handle(handle.id).result({ timeoutMs: 120_000, waitFor: ['approval_required'] });
    for (let i = 0; (await handle.get()).attention !== 'approval_required'; i += 1) {
      if (i > 200) throw new Error('the invocation never asked for approval');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Nothing changes for 1.5 s: a polling client would ask again and again; a held read stays open.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const approver = new Workflow({
      baseUrl: stack.workflowUrl,
      token: stack.ownerToken,
      projectId: stack.project.id,
    });
    await approver.invocations.decideApproval(handle.id, { decision: 'approve' });
    const result = await pending;
    expect(result.invocation.state).toBe('completed');
    const reads = timed.filter((r) => r.url.pathname.endsWith(`/invocations/${handle.id}`));
    const held = reads.filter((r) => Number(r.url.searchParams.get('wait')) > 0);
    expect(held.length).toBeGreaterThan(0);
    expect(Math.max(...held.map((r) => r.ms))).toBeGreaterThanOrEqual(1_000);
    expect(reads.length).toBeLessThanOrEqual(8);
    process.stdout.write(
      `result() through an approval: ${reads.length} reads, longest hold ${Math.max(...held.map((r) => r.ms))} ms\n`,
    );
  });

  test('when a handle is resumed from an id that does not exist, then result() is a NotFoundError', async () => {
    const error = await client()
      .handle('inv_doesnotexist')
      .result({ timeoutMs: 10_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
  });
});
