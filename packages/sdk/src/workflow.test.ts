import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunAttentionError, RunFailedError, WaitTimeoutError, Workflow, WorkflowAgent } from './index';

let server: Server;
let baseUrl: string;
let answer: (path: string, res: ServerResponse, count: number) => void;
let count = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      answer(new URL(req.url ?? '/', 'http://x').pathname, res, count);
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
  count = 0;
});

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
  res.end(JSON.stringify(body));
}

function invocation(overrides: Record<string, unknown>) {
  return {
    invocation_id: 'inv_1',
    project_id: 'prj_1',
    state: 'running',
    attention: 'none',
    attention_reason: null,
    failure: null,
    run_id: 'run_1',
    artifact: null,
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

const workflow = () => new Workflow({ baseUrl, apiKey: 'svc_k', projectId: 'prj_1', maxRetries: 0 });

describe('invocations.waitForArtifact', () => {
  it('polls through running and a pending artifact, then returns the envelope', async () => {
    answer = (path, res, n) => {
      if (path.endsWith('/artifact')) {
        return n < 5
          ? json(res, 404, { type: 'x', title: 'x', status: 404, code: 'artifact_not_found' })
          : json(res, 200, { data: { artifact_id: 'art_1' } });
      }
      json(res, 200, {
        data: invocation(n < 3 ? {} : { state: 'completed', artifact: { artifact_id: 'art_1' } }),
      });
    };
    const states: string[] = [];
    const result = await workflow().invocations.waitForArtifact('inv_1', {
      timeoutMs: 20_000,
      intervalMs: 20,
      onState: (i) => states.push(i.state),
    });
    expect(result.envelope).toEqual({ artifact_id: 'art_1' });
    expect(states).toEqual(['running', 'completed']);
  });

  it('fails fast on a failed run with its typed failure', async () => {
    const failure = {
      reason: 'stage_failed',
      message: 'gave up',
      stage_key: 'write',
      failed_at: '2026-01-01T00:00:00Z',
    };
    answer = (_path, res) =>
      json(res, 200, { data: invocation({ state: 'failed', attention: 'failed', failure }) });
    const error = await workflow()
      .invocations.waitForArtifact('inv_1', { timeoutMs: 20_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFailedError);
    expect((error as RunFailedError).failure).toEqual(failure);
  });

  it('fails fast on attention unless told to wait through it', async () => {
    answer = (_path, res) =>
      json(res, 200, { data: invocation({ attention: 'blocked', attention_reason: 'no credentials' }) });
    const error = await workflow()
      .invocations.waitForArtifact('inv_1', { timeoutMs: 20_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunAttentionError);
    expect((error as RunAttentionError).attention).toBe('blocked');

    const waited = await workflow()
      .invocations.waitForArtifact('inv_1', { timeoutMs: 600, intervalMs: 50, waitFor: ['blocked'] })
      .catch((e: unknown) => e);
    expect(waited).toBeInstanceOf(WaitTimeoutError);
    expect((waited as WaitTimeoutError).lastInvocation?.attention).toBe('blocked');
  });

  it('is bounded by the caller’s timeout even when the server does not answer', async () => {
    answer = (_path, res) => void setTimeout(() => json(res, 200, { data: invocation({}) }), 1500);
    const error = await workflow()
      .invocations.waitForArtifact('inv_1', { timeoutMs: 500 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
  });
});

describe('workflow.run', () => {
  it('waits on the launch’s answer: resolve, invoke, launch, one held read, the artifact', async () => {
    const asked: string[] = [];
    answer = (path, res) => {
      const step = path.split('/').slice(6).join('/');
      asked.push(step);
      if (step === 'resolve-intent') return json(res, 200, { data: { matched: true } });
      if (step === 'invocations')
        return json(res, 201, { data: invocation({ state: 'received', run_id: null }) });
      if (step === 'invocations/inv_1/launch')
        return json(res, 202, {
          data: invocation({ state: 'launching', run_id: null }),
          launch: { outcome: 'accepted', blockers: [] },
        });
      if (step === 'invocations/inv_1')
        return json(res, 200, {
          data: invocation({ state: 'completed', artifact: { artifact_id: 'art_1' } }),
        });
      return json(res, 200, { data: { artifact_id: 'art_1', payload: {} } });
    };
    const states: string[] = [];
    await workflow()
      .run('weekly report', { timeoutMs: 2_000, onState: (inv) => states.push(inv.state) })
      .catch(() => undefined); // the fake envelope does not verify; the requests are what is checked
    expect(asked).toEqual([
      'resolve-intent',
      'invocations',
      'invocations/inv_1/launch',
      'invocations/inv_1',
      'invocations/inv_1/artifact',
    ]);
    expect(states).toEqual(['launching', 'completed']);
  });

  it('requires a timeout and stops at it', async () => {
    await expect(workflow().run('x', { timeoutMs: 0 })).rejects.toMatchObject({
      code: 'argument_invalid',
      argument: 'timeoutMs',
    });
    answer = (_path, res) => void setTimeout(() => json(res, 200, { data: invocation({}) }), 1500);
    await expect(workflow().run('x', { timeoutMs: 400 })).rejects.toBeInstanceOf(WaitTimeoutError);
  });
});

describe('WorkflowAgent.waitForStage', () => {
  it('long-polls until a stage is open and sends the agent token', async () => {
    const auth: string[] = [];
    answer = (_path, res, n) =>
      json(res, 200, { data: n < 3 ? [] : [{ stage_id: 'stg_1', is_final: true }] });
    const agent = new WorkflowAgent({ baseUrl, token: async () => 'agent-jwt' });
    const original = answer;
    answer = (path, res, n) => {
      auth.push(path);
      original(path, res, n);
    };
    const stage = await agent.waitForStage({ timeoutMs: 20_000 });
    expect(stage.stage_id).toBe('stg_1');
    expect(auth).toHaveLength(3);
  });
});

describe('WorkflowAgent.claimNext', () => {
  it('posts to the claims route with its wait and max and returns the claimed stages', async () => {
    const seen: string[] = [];
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
        json(res, 200, { data: [{ stage_id: 'stg_1', state: 'claimed' }] });
      });
    });
    const agent = new WorkflowAgent({ baseUrl, token: 'agent-jwt' });
    const stages = await agent.claimNext({ wait: 20, max: 3 });
    expect(stages.map((stage) => [stage.stage_id, stage.state])).toEqual([['stg_1', 'claimed']]);
    expect(await agent.claimNext()).toHaveLength(1);
    expect(seen).toEqual([
      'POST /api/v1/agents/me/workflow-stages/claims?wait=20&max=3 Bearer agent-jwt',
      'POST /api/v1/agents/me/workflow-stages/claims Bearer agent-jwt',
    ]);
  });
});
