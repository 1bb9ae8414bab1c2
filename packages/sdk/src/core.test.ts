import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  APIConnectionError,
  APITimeoutError,
  ArgumentError,
  AuthenticationError,
  ConflictError,
  IdempotencyError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  SvcError,
  ValidationError,
  VERSION,
  Workflow,
  WorkflowAgent,
} from './index';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

type Handler = (req: Seen, res: ServerResponse, count: number) => void;

let server: Server;
let baseUrl: string;
let handler: Handler;
let seen: Seen[];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        at: Date.now(),
      };
      seen.push(entry);
      handler(entry, res, seen.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(JSON.stringify(body));
}

function problem(status: number, code: string, extra: Record<string, unknown> = {}) {
  return { type: `about:blank#${code}`, title: code, status, code, request_id: 'req_123', ...extra };
}

const INVOCATION = { invocation_id: 'inv_1', project_id: 'prj_1', state: 'received' };

function client(options: { maxRetries?: number; timeoutMs?: number } = {}) {
  return new Workflow({ baseUrl, apiKey: 'svc_test_key', projectId: 'prj_1', ...options });
}

describe('transport', () => {
  it('sends the API key and a User-Agent naming the SDK version', async () => {
    handler = (_req, res) => json(res, 200, { data: INVOCATION });
    await client().invocations.get('inv_1');
    expect(seen[0]?.headers['user-agent']).toBe(`svc-sdk-js/${VERSION}`);
    expect(seen[0]?.headers['x-api-key']).toBe('svc_test_key');
    expect(seen[0]?.url).toBe('/api/v1/projects/prj_1/workflow/invocations/inv_1');
  });

  it('retries a read on 503 and 500 with backoff, then succeeds', async () => {
    handler = (_req, res, count) =>
      count < 3
        ? json(res, count === 1 ? 503 : 500, problem(503, 'unavailable'))
        : json(res, 200, { data: INVOCATION });
    const invocation = await client({ maxRetries: 2 }).invocations.get('inv_1');
    expect(invocation.invocation_id).toBe('inv_1');
    expect(seen).toHaveLength(3);
    // Backoff: the retries are spaced out (at least 375 ms, then 750 ms after jitter).
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(350);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(700);
  });

  it('honours Retry-After on 429 and throws RateLimitError once retries are spent', async () => {
    handler = (_req, res) => json(res, 429, problem(429, 'rate_limited'), { 'retry-after': '1' });
    const error = await client({ maxRetries: 1 })
      .invocations.get('inv_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(1000);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('creates an invocation with a generated idempotency key reused across retries', async () => {
    handler = (_req, res, count) =>
      count === 1 ? json(res, 502, problem(502, 'bad_gateway')) : json(res, 201, { data: INVOCATION });
    const created = await client().invocations.create({ intent: 'weekly report' });
    expect(created.invocation.invocation_id).toBe('inv_1');
    expect(created.replayed).toBe(false);
    expect(seen).toHaveLength(2);
    const key = seen[0]?.headers['idempotency-key'];
    expect(typeof key).toBe('string');
    expect((key as string).length).toBeGreaterThan(10);
    expect(seen[1]?.headers['idempotency-key']).toBe(key);
    expect(JSON.parse(seen[1]!.body)).toEqual({ intent: 'weekly report' });
  });

  it('keeps the caller’s idempotency key and reports a replay', async () => {
    handler = (_req, res) => json(res, 200, { data: INVOCATION }, { 'idempotent-replayed': 'true' });
    const created = await client().invocations.create(
      { intent: 'x' },
      { idempotencyKey: 'order-42', correlationId: 'c-1' },
    );
    expect(created.replayed).toBe(true);
    expect(seen[0]?.headers['idempotency-key']).toBe('order-42');
    expect(seen[0]?.headers['x-correlation-id']).toBe('c-1');
  });

  it('retries launch and cancel, which the server makes idempotent, but no other write', async () => {
    handler = (_req, res) => json(res, 503, problem(503, 'unavailable'));
    await expect(client({ maxRetries: 2 }).invocations.launch('inv_1')).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(seen).toHaveLength(3);
    seen.length = 0;
    await expect(client({ maxRetries: 1 }).invocations.cancel('inv_1')).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(seen).toHaveLength(2);
    seen.length = 0;
    await expect(
      client({ maxRetries: 3 }).invocations.decideApproval('inv_1', { decision: 'approve' }),
    ).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(1);
  });

  it('takes a call’s own timeout and retries over the client’s, and sends neither as a header', async () => {
    handler = (_req, res) => json(res, 503, problem(503, 'unavailable'));
    await expect(
      client({ maxRetries: 0 }).invocations.get('inv_1', { maxRetries: 2 }),
    ).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(3);
    expect(JSON.stringify(seen.map((r) => r.headers))).not.toMatch(/x-svc-sdk-call/);
    seen.length = 0;
    handler = (_req, res) => void setTimeout(() => json(res, 200, { data: INVOCATION }), 1500);
    const slow = await client({ timeoutMs: 30_000, maxRetries: 0 })
      .invocations.get('inv_1', { timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(APITimeoutError);
    expect(slow).toMatchObject({
      code: 'timeout',
      timeoutMs: 200,
      host: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
  });

  it('times out a slow answer with APITimeoutError, retrying reads first', async () => {
    handler = (_req, res) => void setTimeout(() => json(res, 200, { data: INVOCATION }), 2000); // too late
    const error = await client({ timeoutMs: 300, maxRetries: 1 })
      .invocations.get('inv_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(seen).toHaveLength(2);
  });

  it('turns a refused connection into APIConnectionError connection_refused naming the host', async () => {
    const closed = new Workflow({ baseUrl: 'http://127.0.0.1:5498', projectId: 'p', maxRetries: 0 });
    const error = await closed.invocations.get('inv_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).toMatchObject({ code: 'connection_refused', host: '127.0.0.1:5498' });
    expect((error as Error).message).toContain('127.0.0.1:5498');
  });

  it('turns a name that does not resolve into APIConnectionError dns_failed', async () => {
    const nowhere = new Workflow({ baseUrl: 'http://svc-sdk.invalid', projectId: 'p', maxRetries: 0 });
    const error = await nowhere.invocations.get('inv_1').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'dns_failed', host: 'svc-sdk.invalid' });
  });

  it('says why a port fetch itself refuses failed (not only "fetch failed")', async () => {
    const blocked = new Workflow({ baseUrl: 'http://127.0.0.1:9', projectId: 'p', maxRetries: 0 });
    const error = await blocked.invocations.get('inv_1').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'connection_failed', host: '127.0.0.1:9' });
    expect((error as Error).message).toBe('connection failed to 127.0.0.1:9 (fetch failed: bad port)');
  });

  it('refuses what a plain JavaScript caller can get wrong with ArgumentError naming the argument', async () => {
    const argumentOf = async (f: () => unknown) => {
      const error = await Promise.resolve()
        .then(f)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArgumentError);
      return (error as ArgumentError).argument;
    };
    const workflow = new Workflow({ baseUrl: 'http://127.0.0.1:9', projectId: 'p' });
    expect(await argumentOf(() => new Workflow(undefined as never))).toBe('options');
    expect(await argumentOf(() => new Workflow({} as never))).toBe('baseUrl');
    expect(await argumentOf(() => workflow.run('x', undefined as never))).toBe('timeoutMs');
    expect(await argumentOf(() => workflow.run('   ', { timeoutMs: 1000 }))).toBe('intent');
    expect(await argumentOf(() => workflow.start(undefined as never))).toBe('intent');
    expect(await argumentOf(() => new WorkflowAgent({ baseUrl: 'http://127.0.0.1:9' } as never))).toBe(
      'token',
    );
    // An empty id would reach another operation (`…/invocations/` is the list): refused, nothing sent.
    expect(await argumentOf(() => workflow.invocations.get(''))).toBe('invocationId');
    expect(await argumentOf(() => workflow.contracts.get(undefined as never))).toBe('contractId');
    expect(await argumentOf(() => workflow.subscriptions.delete(''))).toBe('subscriptionId');
    // The agent's stage operations too: `…/workflow-stages//claim` would reach no operation at all.
    const agent = new WorkflowAgent({ baseUrl: 'http://127.0.0.1:9', token: 't' });
    expect(await argumentOf(() => agent.claim(''))).toBe('stageId');
    expect(await argumentOf(() => agent.heartbeat('  '))).toBe('stageId');
    expect(await argumentOf(() => agent.complete(undefined as never))).toBe('stageId');
    expect(await argumentOf(() => agent.fail('', 'why'))).toBe('stageId');
  });

  it('refuses a call without a project id with ArgumentError project_id_required, sending nothing', async () => {
    const noProject = new Workflow({ baseUrl: `http://127.0.0.1:9` });
    const error = await Promise.resolve()
      .then(() => noProject.invocations.get('inv_1'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArgumentError);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ code: 'project_id_required', argument: 'projectId' });
    expect(() => new Workflow({ baseUrl: 'ftp://x' })).toThrow(
      expect.objectContaining({ code: 'argument_invalid', argument: 'baseUrl' }),
    );
  });

  it('aborts with the caller’s signal', async () => {
    handler = (_req, res) => void setTimeout(() => json(res, 200, { data: INVOCATION }), 2000);
    const controller = new AbortController();
    const pending = client().invocations.get('inv_1', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 100);
    await expect(pending).rejects.toThrow('stop');
  });
});

describe('errors', () => {
  it.each([
    [400, 'validation_failed', ValidationError],
    [422, 'artifact_schema_mismatch', ValidationError],
    [401, 'unauthenticated', AuthenticationError],
    [403, 'missing_scope', PermissionDeniedError],
    [404, 'invocation_not_found', NotFoundError],
    [409, 'launch_blocked', ConflictError],
    [409, 'idempotency_conflict', IdempotencyError],
  ])('%i %s is %p with status, code, request_id and details', async (status, code, kind) => {
    handler = (_req, res) =>
      json(
        res,
        status,
        problem(status, code, { errors: [{ location: 'body/intent', message: 'required' }] }),
      );
    const error = await client()
      .invocations.get('inv_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(kind);
    expect(error).toMatchObject({ status, code, request_id: 'req_123' });
    expect((error as ValidationError).details).toEqual([{ location: 'body/intent', message: 'required' }]);
  });

  it('launch_blocked carries the typed blockers', async () => {
    const blockers = [
      { code: 'no_running_owner', effect: 'refuses_launch', stage_key: 'write', message: 'no agent' },
    ];
    handler = (_req, res) => json(res, 409, problem(409, 'launch_blocked', { blockers }));
    const error = (await client()
      .invocations.launch('inv_1')
      .catch((e: unknown) => e)) as ConflictError;
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.blockers).toEqual(blockers);
  });
});

describe('pagination', () => {
  it('awaits one page and iterates every page with for await', async () => {
    handler = (req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      const page = cursor === null ? 0 : Number(cursor);
      json(res, 200, {
        data: [{ invocation_id: `inv_${page * 2}` }, { invocation_id: `inv_${page * 2 + 1}` }],
        next_cursor: page < 2 ? String(page + 1) : null,
      });
    };
    const first = await client().invocations.list({ limit: 2 });
    expect(first.data.map((i) => i.invocation_id)).toEqual(['inv_0', 'inv_1']);
    expect(first.nextCursor).toBe('1');
    expect(first.hasNextPage()).toBe(true);
    seen = [];
    const ids: string[] = [];
    for await (const invocation of client().invocations.list({ limit: 2, state: ['running'] }))
      ids.push(invocation.invocation_id);
    expect(ids).toEqual(['inv_0', 'inv_1', 'inv_2', 'inv_3', 'inv_4', 'inv_5']);
    expect(seen.map((s) => s.url)).toEqual([
      '/api/v1/projects/prj_1/workflow/invocations?limit=2&state=running',
      '/api/v1/projects/prj_1/workflow/invocations?limit=2&state=running&cursor=1',
      '/api/v1/projects/prj_1/workflow/invocations?limit=2&state=running&cursor=2',
    ]);
  });
});
