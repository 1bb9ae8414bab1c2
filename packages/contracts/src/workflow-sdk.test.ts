import { createHash } from 'node:crypto';
import {
  ApiError,
  cancelWorkflowInvocation,
  createWorkflowClient,
  decideApproval,
  EnvelopeVerificationError,
  getInvocationArtifact,
  InvocationTerminalError,
  launchInvocation,
  launchWorkflow,
  listWorkflowInvocations,
  publishArtifact,
  verifyEnvelope,
  waitForArtifact,
  WaitForArtifactTimeoutError,
} from './index';
import type { ExpectedEnvelope, WorkflowArtifactEnvelope, WorkflowInvocation } from './index';

const PROJECT = 'prj_one';
const INVOCATION = 'inv_one';
const BASE = `/api/v1/projects/${PROJECT}/workflow/invocations/${INVOCATION}`;

function invocation(overrides: Partial<WorkflowInvocation> = {}): WorkflowInvocation {
  return {
    invocation_id: INVOCATION,
    project_id: PROJECT,
    intent: 'Weekly Report for INC-4711',
    intent_normalized: 'weekly report for inc-4711',
    failure: null,
    cancellation: null,
    state: 'received',
    attention: 'none',
    route: {
      matched: true,
      selection: 'resolved',
      contract_id: 'wfc_one',
      template_key: 'weekly-report',
      template_version: '1.0.0',
      winner_reason: 'intent matched',
    },
    correlation_id: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    stages: [],
    current_stage: null,
    latest_handoff: null,
    artifact: null,
    run_id: null,
    attention_reason: null,
    blockers: [],
    approval: null,
    ...overrides,
  };
}

const PAYLOAD = { title: 'Weekly', items: [{ b: 2, a: 1 }], meta: { z: null, y: 'ü' } };
/** The payload's canonical JSON, written out: keys sorted at every depth, arrays in order. */
const PAYLOAD_CANONICAL = '{"items":[{"a":1,"b":2}],"meta":{"y":"ü","z":null},"title":"Weekly"}';
const PAYLOAD_SHA256 = createHash('sha256').update(PAYLOAD_CANONICAL).digest('hex');

function envelope(overrides: Record<string, unknown> = {}): WorkflowArtifactEnvelope {
  return {
    envelope_version: '1',
    artifact_id: 'art_one',
    workspace_id: 'ws_one',
    project_id: PROJECT,
    invocation_id: INVOCATION,
    run_id: 'run_one',
    schema: { schema_id: 'sch_one', name: 'weekly-report', version: '1.0.0' },
    version: 1,
    summary: 'The weekly report.',
    payload: PAYLOAD,
    payload_sha256: PAYLOAD_SHA256,
    provenance: {
      contract_id: 'wfc_one',
      template: { key: 'weekly-report', version: '1.0.0' },
      stages: [],
      correlation_id: null,
      producer: {},
    },
    limitations: [],
    created_by: { kind: 'agent', id: 'agt_one' },
    created_at: '2026-01-01T00:05:00.000Z',
    ...overrides,
  } as WorkflowArtifactEnvelope;
}

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

function json(status: number, body: unknown): Response {
  const problem = status >= 400;
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': problem ? 'application/problem+json' : 'application/json' },
  });
}

function problem(status: number, code: string, extra: Record<string, unknown> = {}): Response {
  return json(status, { type: 'about:blank', title: code, status, code, detail: `${code} detail`, ...extra });
}

type Step = Response | Error | 'hang';

interface Recorded {
  method: string;
  path: string;
  at: number;
  headers: Headers;
  body: unknown;
}

/**
 * A fake server: answers each `METHOD path` from its own script in order (the last step repeats), and records
 * every request. `'hang'` never answers until the request is aborted; an Error is a network failure.
 */
function fakeWorkflow(script: Record<string, Array<Step | (() => Step)>>) {
  const requests: Recorded[] = [];
  const served: Record<string, number> = {};
  const fetch = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    const key = `${request.method} ${path}`;
    const text = await request.text();
    requests.push({
      method: request.method,
      path,
      at: Date.now(),
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
    });
    const steps = script[key];
    if (!steps || steps.length === 0) throw new Error(`unexpected request ${key}`);
    const index = Math.min(served[key] ?? 0, steps.length - 1);
    served[key] = (served[key] ?? 0) + 1;
    const entry = steps[index]!;
    const step = typeof entry === 'function' ? entry() : entry;
    if (step === 'hang') {
      return new Promise<Response>((_, reject) => {
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
      });
    }
    if (step instanceof Error) throw step;
    return step.clone();
  };
  const client = createWorkflowClient({ baseUrl: 'http://workflow.test', apiKey: 'svc_test', fetch });
  const count = (key: string) => requests.filter((r) => `${r.method} ${r.path}` === key).length;
  return { client, requests, count };
}

const data = (value: unknown, status = 200) => json(status, { data: value });

describe('launchInvocation', () => {
  test('when the launch is accepted, then the launching invocation comes back', async () => {
    const { client, requests } = fakeWorkflow({
      [`POST ${BASE}/launch`]: [data(invocation({ state: 'launching' }), 202)],
    });
    const result = await launchInvocation(client, { projectId: PROJECT, invocationId: INVOCATION });
    expect(result.state).toBe('launching');
    expect(requests[0]?.headers.get('x-api-key')).toBe('svc_test');
  });

  test('when the route is not ready, then ApiError launch_blocked carries the blockers', async () => {
    const blockers = [
      {
        category: 'roster_ownership',
        code: 'no_stage_owner',
        message: 'no agent can own stage draft',
        recommended_action: 'assign an agent',
        stage_key: 'draft',
      },
    ];
    const { client } = fakeWorkflow({
      [`POST ${BASE}/launch`]: [problem(409, 'launch_blocked', { blockers })],
    });
    const error = await launchInvocation(client, { projectId: PROJECT, invocationId: INVOCATION }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: 'launch_blocked' });
    expect((error as ApiError).problem?.blockers).toEqual(blockers);
  });
});

describe('launchWorkflow, listWorkflowInvocations, cancelWorkflowInvocation', () => {
  test('when a launch is accepted waiting for an owner, then the outcome and its blockers come back', async () => {
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
    const { client } = fakeWorkflow({
      [`POST ${BASE}/launch`]: [
        json(202, {
          data: invocation({ state: 'launching' }),
          launch: { outcome: 'accepted_waiting_for_owner', blockers },
        }),
      ],
    });
    const result = await launchWorkflow(client, { projectId: PROJECT, invocationId: INVOCATION });
    expect(result.invocation.state).toBe('launching');
    expect(result.launch).toEqual({ outcome: 'accepted_waiting_for_owner', blockers });
  });

  test('when invocations are listed with filters, then repeated filters are sent and the cursor comes back', async () => {
    const path = `/api/v1/projects/${PROJECT}/workflow/invocations`;
    const requests: Request[] = [];
    const client = createWorkflowClient({
      baseUrl: 'http://workflow.test',
      apiKey: 'svc_test',
      fetch: async (request) => {
        requests.push(request.clone());
        return json(200, { data: [], next_cursor: 'next-page' });
      },
    });
    const page = await listWorkflowInvocations(client, {
      projectId: PROJECT,
      filter: { state: ['running', 'blocked'], contract_id: 'wfc_one', limit: 10 },
    });
    expect(page).toEqual({ invocations: [], nextCursor: 'next-page' });
    const url = new URL(requests[0]!.url);
    expect(url.pathname).toBe(path);
    expect(url.searchParams.getAll('state')).toEqual(['running', 'blocked']);
    expect(url.searchParams.get('contract_id')).toBe('wfc_one');
  });

  test('when a completed invocation is cancelled, then ApiError invocation_terminal', async () => {
    const { client, requests } = fakeWorkflow({
      [`POST ${BASE}/cancel`]: [problem(409, 'invocation_terminal', { state: 'completed' })],
    });
    const error = await cancelWorkflowInvocation(client, {
      projectId: PROJECT,
      invocationId: INVOCATION,
      reason: 'no longer needed',
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 409, code: 'invocation_terminal' });
    expect(requests[0]!.body).toEqual({ reason: 'no longer needed' });
  });
});

describe('decideApproval', () => {
  test('when a participant approves, then the decision and comment are sent with the bearer token', async () => {
    const requests: Request[] = [];
    const client = createWorkflowClient({
      baseUrl: 'http://workflow.test',
      token: 'participant-jwt',
      fetch: async (request) => {
        requests.push(request.clone());
        return data(invocation({ state: 'launching', approval: null }));
      },
    });
    const result = await decideApproval(client, {
      projectId: PROJECT,
      invocationId: INVOCATION,
      decision: 'approve',
      comment: 'looks right',
    });
    expect(result.state).toBe('launching');
    const sent = requests[0]!;
    expect(new URL(sent.url).pathname).toBe(`${BASE}/approval`);
    expect(sent.headers.get('authorization')).toBe('Bearer participant-jwt');
    expect(await sent.json()).toEqual({ decision: 'approve', comment: 'looks right' });
  });

  test('when the invocation is not awaiting approval, then ApiError approval_not_pending is thrown', async () => {
    const { client, requests } = fakeWorkflow({
      [`POST ${BASE}/approval`]: [problem(409, 'approval_not_pending')],
    });
    await expect(
      decideApproval(client, { projectId: PROJECT, invocationId: INVOCATION, decision: 'reject' }),
    ).rejects.toMatchObject({ status: 409, code: 'approval_not_pending' });
    expect(requests[0]?.body).toEqual({ decision: 'reject' });
  });
});

describe('artifact read and publish', () => {
  test('when the artifact is published, then getInvocationArtifact returns the envelope', async () => {
    const { client } = fakeWorkflow({ [`GET ${BASE}/artifact`]: [data(envelope())] });
    await expect(
      getInvocationArtifact(client, { projectId: PROJECT, invocationId: INVOCATION }),
    ).resolves.toEqual(envelope());
  });

  test('when nothing is published yet, then getInvocationArtifact throws artifact_not_found', async () => {
    const { client } = fakeWorkflow({ [`GET ${BASE}/artifact`]: [problem(404, 'artifact_not_found')] });
    await expect(
      getInvocationArtifact(client, { projectId: PROJECT, invocationId: INVOCATION }),
    ).rejects.toMatchObject({ status: 404, code: 'artifact_not_found' });
  });

  test('when a payload is published then published again, then the second result is replayed', async () => {
    const { client, requests } = fakeWorkflow({
      [`POST ${BASE}/artifact`]: [data(envelope(), 201), data(envelope(), 200)],
    });
    const first = await publishArtifact(client, {
      projectId: PROJECT,
      invocationId: INVOCATION,
      payload: PAYLOAD,
      summary: 'The weekly report.',
      limitations: ['sample data'],
      provenance: { tool: 'writer' },
    });
    expect(first).toEqual({ envelope: envelope(), replayed: false });
    expect(requests[0]?.body).toEqual({
      payload: PAYLOAD,
      summary: 'The weekly report.',
      limitations: ['sample data'],
      provenance: { tool: 'writer' },
    });
    const second = await publishArtifact(client, {
      projectId: PROJECT,
      invocationId: INVOCATION,
      payload: PAYLOAD,
    });
    expect(second.replayed).toBe(true);
    expect(requests[1]?.body).toEqual({ payload: PAYLOAD });
  });

  test('when the payload does not match the schema, then ApiError artifact_schema_mismatch is thrown', async () => {
    const { client } = fakeWorkflow({
      [`POST ${BASE}/artifact`]: [problem(422, 'artifact_schema_mismatch', { evidence_id: 'evd_1' })],
    });
    const error = await publishArtifact(client, {
      projectId: PROJECT,
      invocationId: INVOCATION,
      payload: { wrong: true },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 422, code: 'artifact_schema_mismatch' });
    expect((error as ApiError).problem?.evidence_id).toBe('evd_1');
  });
});

describe('waitForArtifact', () => {
  const target = { projectId: PROJECT, invocationId: INVOCATION };

  test('when the invocation moves through its states to completed, then the invocation and envelope come back', async () => {
    const running = invocation({
      state: 'running',
      run_id: 'run_one',
      updated_at: '2026-01-01T00:01:00.000Z',
    });
    const waiting = invocation({
      state: 'waiting_for_artifact',
      run_id: 'run_one',
      updated_at: '2026-01-01T00:02:00.000Z',
    });
    const { client, count } = fakeWorkflow({
      [`GET ${BASE}`]: [
        data(invocation({ state: 'launching' })),
        data(running),
        data(running),
        data(waiting),
        data(waiting),
        data(completed()),
      ],
      [`GET ${BASE}/artifact`]: [data(envelope())],
    });
    const seen: string[] = [];
    const result = await waitForArtifact(client, {
      ...target,
      timeoutMs: 5000,
      intervalMs: 2,
      onState: (inv) => seen.push(inv.state),
    });
    expect(result).toEqual({ invocation: completed(), envelope: envelope() });
    expect(seen).toEqual(['launching', 'running', 'waiting_for_artifact', 'completed']);
    expect(count(`GET ${BASE}`)).toBe(6);
    expect(count(`GET ${BASE}/artifact`)).toBe(1);
  });

  test('when polls fail with a network error, a 503 or a 429, then polling goes on', async () => {
    const { client, count } = fakeWorkflow({
      [`GET ${BASE}`]: [
        new TypeError('fetch failed'),
        problem(503, 'service_unavailable'),
        problem(429, 'rate_limited'),
        data(completed()),
      ],
      [`GET ${BASE}/artifact`]: [data(envelope())],
    });
    const result = await waitForArtifact(client, { ...target, timeoutMs: 5000, intervalMs: 2 });
    expect(result.envelope.artifact_id).toBe('art_one');
    expect(count(`GET ${BASE}`)).toBe(4);
  });

  test('when the artifact read answers artifact_not_found at first, then polling goes on until it is served', async () => {
    const { client, count } = fakeWorkflow({
      [`GET ${BASE}`]: [data(completed())],
      [`GET ${BASE}/artifact`]: [
        problem(404, 'artifact_not_found'),
        problem(502, 'bad_gateway'),
        data(envelope()),
      ],
    });
    const result = await waitForArtifact(client, { ...target, timeoutMs: 5000, intervalMs: 2 });
    expect(result.envelope).toEqual(envelope());
    expect(count(`GET ${BASE}/artifact`)).toBe(3);
  });

  test('when the invocation stays waiting_for_artifact, then the timeout error names the last state and attention', async () => {
    const waiting = invocation({ state: 'waiting_for_artifact', run_id: 'run_one' });
    const { client, count } = fakeWorkflow({ [`GET ${BASE}`]: [data(waiting)] });
    const started = Date.now();
    const error = await waitForArtifact(client, { ...target, timeoutMs: 80, intervalMs: 5 }).catch(
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(78);
    expect(error).toBeInstanceOf(WaitForArtifactTimeoutError);
    expect((error as Error).message).toBe(
      'no artifact after 80 ms; last state waiting_for_artifact (attention none)',
    );
    expect((error as WaitForArtifactTimeoutError).lastInvocation).toEqual(waiting);
    expect(count(`GET ${BASE}`)).toBeGreaterThan(1);
  });

  test('when the invocation is stalled at the timeout, then the message carries the attention reason', async () => {
    const stalled = invocation({
      state: 'running',
      attention: 'stalled',
      attention_reason: 'stage draft has no heartbeat',
    });
    const { client } = fakeWorkflow({ [`GET ${BASE}`]: [data(stalled)] });
    await expect(waitForArtifact(client, { ...target, timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(
      'no artifact after 30 ms; last state running (attention stalled: stage draft has no heartbeat)',
    );
  });

  test('when completed is seen but the artifact is never served, then the timeout says so with the last error', async () => {
    const { client } = fakeWorkflow({
      [`GET ${BASE}`]: [data(completed())],
      [`GET ${BASE}/artifact`]: [problem(404, 'artifact_not_found')],
    });
    const error = (await waitForArtifact(client, { ...target, timeoutMs: 30, intervalMs: 5 }).catch(
      (e: unknown) => e,
    )) as WaitForArtifactTimeoutError;
    expect(error).toBeInstanceOf(WaitForArtifactTimeoutError);
    expect(error.message).toBe(
      'no artifact after 30 ms; last state completed (attention none); last error: artifact_not_found detail',
    );
    expect(error.lastError).toMatchObject({ code: 'artifact_not_found' });
  });

  test('when the invocation was never read, then the timeout says so and keeps the last error', async () => {
    const { client } = fakeWorkflow({ [`GET ${BASE}`]: [problem(503, 'service_unavailable')] });
    const error = (await waitForArtifact(client, { ...target, timeoutMs: 30, intervalMs: 5 }).catch(
      (e: unknown) => e,
    )) as WaitForArtifactTimeoutError;
    expect(error.message).toBe(
      'no artifact after 30 ms; the invocation could not be read; last error: service_unavailable detail',
    );
    expect(error.lastInvocation).toBeUndefined();
  });

  test('when a request hangs, then it is cut off at the timeout', async () => {
    const { client } = fakeWorkflow({ [`GET ${BASE}`]: [data(invocation({ state: 'running' })), 'hang'] });
    const started = Date.now();
    const error = await waitForArtifact(client, { ...target, timeoutMs: 60, intervalMs: 5 }).catch(
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error).toBeInstanceOf(WaitForArtifactTimeoutError);
    expect((error as Error).message).toBe('no artifact after 60 ms; last state running (attention none)');
  });

  test.each(['failed', 'cancelled'] as const)(
    'when the invocation is %s, then a terminal error naming state and attention is thrown at once',
    async (state) => {
      const ended = invocation({
        state,
        attention: state === 'failed' ? 'failed' : 'none',
        attention_reason: state === 'failed' ? 'stage draft failed' : null,
      });
      const { client, count } = fakeWorkflow({ [`GET ${BASE}`]: [data(ended)] });
      const error = await waitForArtifact(client, { ...target, timeoutMs: 5000, intervalMs: 5 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvocationTerminalError);
      expect((error as InvocationTerminalError).invocation).toEqual(ended);
      expect((error as Error).message).toBe(
        state === 'failed'
          ? 'invocation inv_one ended in state failed (attention failed: stage draft failed) without an artifact'
          : 'invocation inv_one ended in state cancelled (attention none) without an artifact',
      );
      expect(count(`GET ${BASE}`)).toBe(1);
    },
  );

  test('when a poll answers a 4xx, then its ApiError is thrown at once', async () => {
    const { client, count } = fakeWorkflow({ [`GET ${BASE}`]: [problem(404, 'invocation_not_found')] });
    await expect(
      waitForArtifact(client, { ...target, timeoutMs: 5000, intervalMs: 5 }),
    ).rejects.toMatchObject({
      status: 404,
      code: 'invocation_not_found',
    });
    expect(count(`GET ${BASE}`)).toBe(1);
  });

  test('when the artifact read answers a 403, then its ApiError is thrown at once', async () => {
    const { client } = fakeWorkflow({
      [`GET ${BASE}`]: [data(completed())],
      [`GET ${BASE}/artifact`]: [problem(403, 'forbidden')],
    });
    await expect(
      waitForArtifact(client, { ...target, timeoutMs: 5000, intervalMs: 5 }),
    ).rejects.toMatchObject({
      status: 403,
    });
  });

  test('when the caller aborts, then the wait rejects with the abort reason', async () => {
    const { client } = fakeWorkflow({ [`GET ${BASE}`]: [data(invocation({ state: 'running' }))] });
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 20);
    await expect(
      waitForArtifact(client, { ...target, timeoutMs: 5000, intervalMs: 5, signal: controller.signal }),
    ).rejects.toBe(reason);
  });

  test('when polling goes on, then the delay grows by half each time up to the cap', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const { client, requests } = fakeWorkflow({
        [`GET ${BASE}`]: [data(invocation({ state: 'running' }))],
      });
      const outcome = waitForArtifact(client, {
        ...target,
        timeoutMs: 230,
        intervalMs: 20,
        maxIntervalMs: 45,
      }).catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(300);
      expect(await outcome).toBeInstanceOf(WaitForArtifactTimeoutError);
      const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
      expect(gaps).toEqual([20, 30, 45, 45, 45]);
    } finally {
      jest.useRealTimers();
    }
  });

  test('when timeoutMs is missing or not positive, then a RangeError is thrown before any request', async () => {
    const { client, requests } = fakeWorkflow({});
    for (const timeoutMs of [undefined, 0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(
        waitForArtifact(client, { ...target, timeoutMs: timeoutMs as unknown as number }),
      ).rejects.toBeInstanceOf(RangeError);
    }
    await expect(
      waitForArtifact(client, { ...target, timeoutMs: 100, intervalMs: 0 }),
    ).rejects.toBeInstanceOf(RangeError);
    expect(requests).toHaveLength(0);
  });
});

describe('verifyEnvelope', () => {
  const expected: ExpectedEnvelope = {
    projectId: PROJECT,
    invocationId: INVOCATION,
    workspaceId: 'ws_one',
    runId: 'run_one',
    artifactId: 'art_one',
    schema: { name: 'weekly-report', versions: ['1.0.0', '1.1.0'] },
  };

  function codeOf(value: unknown, want: ExpectedEnvelope = expected): string | undefined {
    try {
      verifyEnvelope(value, want);
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(EnvelopeVerificationError);
      return (error as EnvelopeVerificationError).code;
    }
  }

  test('when the envelope is good and carries unknown extra fields, then it is returned', () => {
    const good = { ...envelope(), future_field: { anything: true } };
    expect(verifyEnvelope(good, expected)).toBe(good);
    expect(verifyEnvelope(envelope(), { projectId: PROJECT, invocationId: INVOCATION })).toEqual(envelope());
  });

  test('when the payload hash is checked, then it is the SHA-256 of the canonical JSON (keys sorted at every depth)', () => {
    const reordered = { meta: { y: 'ü', z: null }, items: [{ a: 1, b: 2 }], title: 'Weekly' };
    expect(verifyEnvelope(envelope({ payload: reordered }), expected).payload).toEqual(reordered);
    expect(
      verifyEnvelope(envelope({ payload_sha256: PAYLOAD_SHA256.toUpperCase() }), expected),
    ).toBeDefined();
    const scalar = createHash('sha256').update('"plain text"').digest('hex');
    expect(codeOf(envelope({ payload: 'plain text', payload_sha256: scalar }))).toBeUndefined();
    const nullPayload = createHash('sha256').update('null').digest('hex');
    expect(codeOf(envelope({ payload: null, payload_sha256: nullPayload }))).toBeUndefined();
  });

  test.each([
    ['a string', 'not an envelope'],
    ['null', null],
    ['an array', [envelope()]],
  ])('when the envelope is %s, then it is envelope_malformed', (_, value) => {
    expect(codeOf(value)).toBe('envelope_malformed');
  });

  test.each([
    ['envelope_version is 2', { envelope_version: '2' }],
    ['envelope_version is missing', { envelope_version: undefined }],
    ...[
      'artifact_id',
      'workspace_id',
      'project_id',
      'invocation_id',
      'run_id',
      'payload_sha256',
      'created_by',
      'created_at',
    ].map((field) => [`${field} is missing`, { [field]: undefined }] as [string, Record<string, unknown>]),
    ['artifact_id is empty', { artifact_id: '' }],
    ['run_id is null', { run_id: null }],
    ['schema is missing', { schema: undefined }],
    ['schema.schema_id is missing', { schema: { name: 'weekly-report', version: '1.0.0' } }],
    ['schema.name is missing', { schema: { schema_id: 'sch_one', version: '1.0.0' } }],
    ['schema.version is missing', { schema: { schema_id: 'sch_one', name: 'weekly-report' } }],
    ['version is missing', { version: undefined }],
    ['version is not an integer', { version: '1' }],
    ['payload_sha256 is not a digest', { payload_sha256: 'abc' }],
    ['created_by has no kind', { created_by: { id: 'agt_one' } }],
    ['payload is missing', { payload: undefined }],
  ])('when %s, then it is envelope_malformed', (_, overrides) => {
    expect(codeOf(envelope(overrides))).toBe('envelope_malformed');
  });

  test.each([
    ['project_id', { project_id: 'prj_other' }],
    ['invocation_id', { invocation_id: 'inv_other' }],
    ['workspace_id', { workspace_id: 'ws_other' }],
    ['run_id', { run_id: 'run_other' }],
    ['artifact_id', { artifact_id: 'art_other' }],
  ])('when %s differs from what was asked for, then it is envelope_identity_mismatch', (field, overrides) => {
    let caught: unknown;
    try {
      verifyEnvelope(envelope(overrides), expected);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'envelope_identity_mismatch', field });
  });

  test('when optional identities are not expected, then they are not compared', () => {
    expect(
      codeOf(envelope({ workspace_id: 'ws_other', run_id: 'run_other', artifact_id: 'art_other' }), {
        projectId: PROJECT,
        invocationId: INVOCATION,
      }),
    ).toBeUndefined();
  });

  test('when the schema name differs or its version is not supported, then it is envelope_schema_unsupported', () => {
    expect(
      codeOf(envelope({ schema: { schema_id: 'sch_one', name: 'other-report', version: '1.0.0' } })),
    ).toBe('envelope_schema_unsupported');
    expect(
      codeOf(envelope({ schema: { schema_id: 'sch_one', name: 'weekly-report', version: '2.0.0' } })),
    ).toBe('envelope_schema_unsupported');
    expect(
      codeOf(envelope({ schema: { schema_id: 'sch_two', name: 'weekly-report', version: '1.1.0' } })),
    ).toBeUndefined();
  });

  test('when the payload was changed after hashing, then it is envelope_payload_tampered', () => {
    expect(codeOf(envelope({ payload: { ...PAYLOAD, title: 'Forged' } }))).toBe('envelope_payload_tampered');
    expect(codeOf(envelope({ payload_sha256: createHash('sha256').update('{}').digest('hex') }))).toBe(
      'envelope_payload_tampered',
    );
    expect(codeOf(envelope({ payload: { ...PAYLOAD, items: [{ a: 2, b: 1 }] } }))).toBe(
      'envelope_payload_tampered',
    );
  });

  test('when checks fail in several ways, then malformed comes before identity, schema and tampering', () => {
    expect(codeOf(envelope({ project_id: 'prj_other', run_id: undefined }))).toBe('envelope_malformed');
    expect(
      codeOf(
        envelope({
          project_id: 'prj_other',
          schema: { schema_id: 's', name: 'x', version: '9' },
          payload: 'forged',
        }),
      ),
    ).toBe('envelope_identity_mismatch');
    expect(codeOf(envelope({ schema: { schema_id: 's', name: 'x', version: '9' }, payload: 'forged' }))).toBe(
      'envelope_schema_unsupported',
    );
  });
});
