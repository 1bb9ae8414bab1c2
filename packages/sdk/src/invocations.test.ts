/**
 * `workflow.invocations` against a scripted `fetch`: what each method sends and makes of the answer, and how
 * `waitForArtifact` polls (through transient failures, with a growing delay, bounded and abortable). The
 * client's own retries are off, so every answer reaches the method.
 */
import {
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
  RunFailedError,
  ValidationError,
  WaitTimeoutError,
  Workflow,
} from './index';
import type { ArtifactEnvelope, Invocation } from './index';

const PROJECT = 'prj_one';
const INVOCATION = 'inv_one';
const BASE = `/api/v1/projects/${PROJECT}/workflow/invocations/${INVOCATION}`;

/** The fields the methods under test read; the rest of an invocation does not matter here. */
function invocation(overrides: Partial<Invocation> = {}): Invocation {
  return {
    invocation_id: INVOCATION,
    project_id: PROJECT,
    state: 'received',
    attention: 'none',
    attention_reason: null,
    failure: null,
    artifact: null,
    run_id: null,
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  } as Invocation;
}

const ENVELOPE = { artifact_id: 'art_one', invocation_id: INVOCATION } as ArtifactEnvelope;

const completed = () =>
  invocation({
    state: 'completed',
    run_id: 'run_one',
    updated_at: '2026-01-01T00:05:00.000Z',
    artifact: {
      artifact_id: 'art_one',
      schema_name: 'weekly-report',
      schema_version: '1.0.0',
      created_at: '2026-01-01T00:05:00.000Z',
    },
  });

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': type, ...headers } });
}

function problem(status: number, code: string, extra: Record<string, unknown> = {}): Response {
  return json(status, { type: 'about:blank', title: code, status, code, detail: `${code} detail`, ...extra });
}

const data = (value: unknown, status = 200) => json(status, { data: value });

type Step = Response | Error | 'hang';

interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  at: number;
  headers: Headers;
  body: unknown;
}

/**
 * A scripted server: answers each `METHOD path` from its own script in order (the last step repeats) and
 * records every request. `'hang'` never answers until the request is aborted; an Error is a network failure.
 */
function scripted(script: Record<string, Step[]>, options: { token?: string } = {}) {
  const requests: Recorded[] = [];
  const served: Record<string, number> = {};
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const key = `${request.method} ${url.pathname}`;
    const text = await request.text();
    requests.push({
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      at: Date.now(),
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
    });
    const steps = script[key];
    if (!steps || steps.length === 0) throw new Error(`unexpected request ${key}`);
    const index = Math.min(served[key] ?? 0, steps.length - 1);
    served[key] = (served[key] ?? 0) + 1;
    const step = steps[index]!;
    if (step === 'hang') {
      return new Promise<Response>((_, reject) => {
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
      });
    }
    if (step instanceof Error) throw step;
    return step.clone();
  };
  const credential = options.token ? { token: options.token } : { apiKey: 'svc_test' };
  const workflow = new Workflow({
    baseUrl: 'http://workflow.test',
    projectId: PROJECT,
    maxRetries: 0,
    fetch,
    ...credential,
  });
  const count = (key: string) => requests.filter((r) => `${r.method} ${r.path}` === key).length;
  return { workflow, requests, count };
}

describe('launch, list, cancel and approval', () => {
  it('when a launch is accepted waiting for an owner, then launchWithReport returns the outcome and its blockers', async () => {
    const blockers = [
      {
        category: 'roster_ownership',
        code: 'no_stage_owner',
        message: 'no running agent can own stage draft',
        recommended_action: 'start an agent',
        stage_key: 'draft',
        effect: 'waits_for_owner',
      },
    ];
    const { workflow } = scripted({
      [`POST ${BASE}/launch`]: [
        json(202, {
          data: invocation({ state: 'launching' }),
          launch: { outcome: 'accepted_waiting_for_owner', blockers },
        }),
      ],
    });
    const result = await workflow.invocations.launchWithReport(INVOCATION);
    expect(result.invocation.state).toBe('launching');
    expect(result.launch).toEqual({ outcome: 'accepted_waiting_for_owner', blockers });
  });

  it('when invocations are listed with filters, then repeated filters are sent and the next cursor comes back', async () => {
    const { workflow, requests } = scripted({
      [`GET /api/v1/projects/${PROJECT}/workflow/invocations`]: [
        json(200, { data: [], next_cursor: 'next' }),
      ],
    });
    const page = await workflow.invocations.list({
      state: ['running', 'blocked'],
      contract_id: 'wfc_one',
      limit: 10,
    });
    expect(page.data).toEqual([]);
    expect(page.nextCursor).toBe('next');
    expect(requests[0]!.query.getAll('state')).toEqual(['running', 'blocked']);
    expect(requests[0]!.query.get('contract_id')).toBe('wfc_one');
  });

  it('when a completed invocation is cancelled, then ConflictError invocation_terminal; the reason was sent', async () => {
    const { workflow, requests } = scripted({
      [`POST ${BASE}/cancel`]: [problem(409, 'invocation_terminal', { state: 'completed' })],
    });
    const error = await workflow.invocations
      .cancel(INVOCATION, { reason: 'no longer needed' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'invocation_terminal' });
    expect(requests[0]!.body).toEqual({ reason: 'no longer needed' });
  });

  it('when a participant decides an approval, then the decision and comment go with the bearer token', async () => {
    const { workflow, requests } = scripted(
      {
        [`POST ${BASE}/approval`]: [
          data(invocation({ state: 'launching' })),
          problem(409, 'approval_not_pending'),
        ],
      },
      { token: 'participant-jwt' },
    );
    const approved = await workflow.invocations.decideApproval(INVOCATION, {
      decision: 'approve',
      comment: 'looks right',
    });
    expect(approved.state).toBe('launching');
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer participant-jwt');
    expect(requests[0]!.body).toEqual({ decision: 'approve', comment: 'looks right' });
    await expect(
      workflow.invocations.decideApproval(INVOCATION, { decision: 'reject' }),
    ).rejects.toMatchObject({ status: 409, code: 'approval_not_pending' });
    expect(requests[1]!.body).toEqual({ decision: 'reject' });
  });
});

describe('publishArtifact', () => {
  it('when a payload is published then published again, then the second result is a replay', async () => {
    const { workflow, requests } = scripted({
      [`POST ${BASE}/artifact`]: [data(ENVELOPE, 201), data(ENVELOPE, 200)],
    });
    const body = {
      payload: { title: 'Weekly' },
      summary: 'The weekly report.',
      limitations: ['sample data'],
      provenance: { tool: 'writer' },
    };
    expect(await workflow.invocations.publishArtifact(INVOCATION, body)).toEqual({
      envelope: ENVELOPE,
      replayed: false,
    });
    expect(requests[0]!.body).toEqual(body);
    const again = await workflow.invocations.publishArtifact(INVOCATION, { payload: { title: 'Weekly' } });
    expect(again.replayed).toBe(true);
  });

  it('when the payload does not match the schema, then ValidationError carries the evidence id', async () => {
    const { workflow } = scripted({
      [`POST ${BASE}/artifact`]: [problem(422, 'artifact_schema_mismatch', { evidence_id: 'evd_1' })],
    });
    const error = await workflow.invocations
      .publishArtifact(INVOCATION, { payload: { wrong: true } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).problem?.evidence_id).toBe('evd_1');
  });
});

describe('waitForArtifact', () => {
  it('when polls fail with a network error, a 503 or a 429, or the artifact is not served yet, then polling goes on', async () => {
    const { workflow, count } = scripted({
      [`GET ${BASE}`]: [
        new TypeError('fetch failed'),
        problem(503, 'service_unavailable'),
        problem(429, 'rate_limited'),
        data(completed()),
      ],
      [`GET ${BASE}/artifact`]: [
        problem(404, 'artifact_not_found'),
        problem(502, 'bad_gateway'),
        data(ENVELOPE),
      ],
    });
    const result = await workflow.invocations.waitForArtifact(INVOCATION, { timeoutMs: 5000, intervalMs: 2 });
    expect(result).toEqual({ invocation: completed(), envelope: ENVELOPE });
    // Each answer read once: three failures waited through, then the completed invocation.
    expect(count(`GET ${BASE}`)).toBe(4);
    expect(count(`GET ${BASE}/artifact`)).toBe(3);
  });

  it('when the invocation stays waiting_for_artifact, then the timeout names that last state', async () => {
    const waiting = invocation({ state: 'waiting_for_artifact', run_id: 'run_one' });
    const { workflow, count } = scripted({ [`GET ${BASE}`]: [data(waiting)] });
    const error = await workflow.invocations
      .waitForArtifact(INVOCATION, { timeoutMs: 80, intervalMs: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toMatch(/last state waiting_for_artifact/);
    expect((error as WaitTimeoutError).lastInvocation).toEqual(waiting);
    expect(count(`GET ${BASE}`)).toBeGreaterThan(1);
  });

  it('when the invocation is cancelled, then RunFailedError at once', async () => {
    const { workflow, count } = scripted({ [`GET ${BASE}`]: [data(invocation({ state: 'cancelled' }))] });
    await expect(
      workflow.invocations.waitForArtifact(INVOCATION, { timeoutMs: 5000, intervalMs: 5 }),
    ).rejects.toBeInstanceOf(RunFailedError);
    expect(count(`GET ${BASE}`)).toBe(1);
  });

  it('when a poll answers another 4xx, then its error is thrown at once', async () => {
    const missing = scripted({ [`GET ${BASE}`]: [problem(404, 'invocation_not_found')] });
    await expect(
      missing.workflow.invocations.waitForArtifact(INVOCATION, { timeoutMs: 5000, intervalMs: 5 }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(missing.count(`GET ${BASE}`)).toBe(1);
    const forbidden = scripted({
      [`GET ${BASE}`]: [data(completed())],
      [`GET ${BASE}/artifact`]: [problem(403, 'scope_missing')],
    });
    await expect(
      forbidden.workflow.invocations.waitForArtifact(INVOCATION, { timeoutMs: 5000, intervalMs: 5 }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it('when the caller aborts, then the wait rejects with the abort reason', async () => {
    const { workflow } = scripted({ [`GET ${BASE}`]: [data(invocation({ state: 'running' })), 'hang'] });
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 20);
    await expect(
      workflow.invocations.waitForArtifact(INVOCATION, {
        timeoutMs: 5000,
        intervalMs: 5,
        signal: controller.signal,
      }),
    ).rejects.toBe(reason);
  });

  it('when the server answers held reads at once, unchanged, then the reads are paced, the pause growing by half up to the cap', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const { workflow, requests } = scripted({ [`GET ${BASE}`]: [data(invocation({ state: 'running' }))] });
      const outcome = workflow.invocations
        .waitForArtifact(INVOCATION, { timeoutMs: 230, intervalMs: 20, maxIntervalMs: 45 })
        .catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(300);
      expect(await outcome).toBeInstanceOf(WaitTimeoutError);
      const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
      // The first held read follows the first read at once; the server answered it without holding, so from
      // then on the reads are paced.
      expect(gaps).toEqual([0, 20, 30, 45, 45, 45]);
      expect(requests[0]!.query.get('wait')).toBeNull();
      expect(Number(requests[1]!.query.get('wait'))).toBeGreaterThan(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('when timeoutMs is missing or not positive, then an ArgumentError is thrown before any request', async () => {
    const { workflow, requests } = scripted({});
    for (const timeoutMs of [undefined, 0, -1, Number.NaN]) {
      await expect(
        workflow.invocations.waitForArtifact(INVOCATION, { timeoutMs: timeoutMs as unknown as number }),
      ).rejects.toMatchObject({ name: 'ArgumentError', code: 'argument_invalid' });
    }
    expect(requests).toHaveLength(0);
  });
});
