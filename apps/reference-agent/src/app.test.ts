import { createLogger } from '@svc/service-kit';
import { eventually, sleep } from '@svc/testing';
import { createReferenceAgent } from './app';
import type { ReferenceAgent, ReferenceAgentOptions } from './app';
import { defaultStageHandler } from './domain/default-stage-handler';
import { StageBlockedError } from './domain/stage-handler';
import type { StageHandler } from './domain/stage-handler';
import { FakePlatform } from '../test/support/fake-platform';

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZ3RfMSIsImF1ZCI6ImFnZW50In0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';

const REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['title', 'summary', 'incidents', 'generated_at'],
  properties: {
    title: { type: 'string', maxLength: 80 },
    summary: { type: 'string', minLength: 20 },
    generated_at: { type: 'string', format: 'date-time' },
    incidents: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['id', 'severity'],
        properties: {
          id: { type: 'string', pattern: '^INC-[0-9]{4}$' },
          severity: { enum: ['sev1', 'sev2', 'sev3'] },
        },
      },
    },
  },
};

describe('reference agent', () => {
  let platform: FakePlatform;
  let agent: ReferenceAgent | undefined;
  let logLines: string[];

  beforeEach(async () => {
    platform = new FakePlatform(TOKEN);
    await platform.start();
    logLines = [];
  });

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await platform.close();
    // The token never reaches a log line, whatever happened in the test.
    expect(logLines.join('\n')).not.toContain(TOKEN);
  });

  function startAgent(overrides: Partial<ReferenceAgentOptions> = {}): ReferenceAgent {
    const logger = createLogger({
      name: 'reference-agent-test',
      level: 'debug',
      destination: { write: (line: string) => logLines.push(line) },
    });
    agent = createReferenceAgent({
      token: TOKEN,
      hubUrl: platform.url,
      workflowUrl: platform.url,
      logger,
      pollWaitSeconds: 1,
      idlePollMs: 50,
      hubHeartbeatSeconds: 60,
      retry: { initialDelayMs: 20, maxDelayMs: 100, requestTimeoutMs: 5_000 },
      ...overrides,
    });
    return agent;
  }

  const logged = (msg: string) =>
    logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === msg);

  it('when a two-stage run is assigned, then each stage is claimed, heartbeated, evidenced and completed, and the final one publishes a valid artifact', async () => {
    platform.onComplete = (done) => {
      if (done.position === 1) {
        platform.assign({
          position: 2,
          stage_count: 2,
          is_final: true,
          key: 'write',
          title: 'Write the report',
          artifact_schema: { name: 'incident-report', version: '1.0.0', json_schema: REPORT_SCHEMA },
        });
      }
    };
    const first = platform.assign({
      position: 1,
      stage_count: 2,
      is_final: false,
      key: 'research',
      title: 'Research',
    });
    const handler: StageHandler = async (ctx) => {
      // Long enough for the stage heartbeat timer (every heartbeat_interval_seconds = 1 s) to fire.
      if (ctx.stage.position === 1) await sleep(1_200);
      return defaultStageHandler(ctx);
    };
    await startAgent({ handler }).start();

    await eventually(
      () =>
        platform.published.has('inv_1') &&
        [...platform.stages.values()].every((s) => s.state === 'completed'),
      15_000,
      'the run to complete',
    );
    expect(platform.stages.size).toBe(2);
    const second = [...platform.stages.values()].find((s) => s.position === 2);
    if (!second) throw new Error('second stage missing');

    // One round trip ends each stage, its `stage.result` evidence with it: the first stage's completion, the
    // final stage's publication (which completes it: no …/evidence and no …/complete for it).
    const firstActions = platform.callsFor(first.stage_id).map((call) => call.path.split('/').pop());
    expect(firstActions[0]).toBe('claim');
    expect(firstActions[firstActions.length - 1]).toBe('complete');
    expect(firstActions).not.toContain('evidence');
    const [complete] = platform.callsFor(first.stage_id, 'complete');
    expect((complete?.body as { summary: string }).summary).toContain(first.title);
    // The first stage came with the agent's first listing and was claimed on its own; the second, assigned
    // while the agent waited, came claimed by one claim-next and was never claimed again.
    expect(platform.claimedNext.flat()).toEqual([second.stage_id]);
    expect(
      platform
        .callsFor(second.stage_id)
        .map((call) => call.path.split('/').pop())
        .filter((a) => a !== 'heartbeat'),
    ).toEqual([]);
    for (const stage of [first, second]) {
      expect(platform.evidence.get(stage.stage_id)).toEqual([
        { kind: 'stage.result', content: expect.objectContaining({ stage_key: stage.key }) },
      ]);
    }
    // The timer heartbeat carried a progress note.
    const beats = platform
      .callsFor(first.stage_id, 'heartbeat')
      .map((call) => (call.body as { progress?: string }).progress);
    expect(beats.some((note) => note?.startsWith('Working on "Research" for'))).toBe(true);
    // Published with the handler's summary, limitations and provenance.
    const publish = platform.calls.find((call) => call.path.endsWith('/artifact'));
    expect(publish?.body).toMatchObject({
      summary: expect.stringContaining('incident-report@1.0.0'),
      limitations: [expect.stringContaining('default handler')],
      provenance: { agent: 'reference-agent', stage_key: 'write', handler: 'default' },
    });
    expect(platform.published.get('inv_1')).toMatchObject({ incidents: [{ id: 'INC-0000' }] });
    // The first stage never touched the artifact.
    expect(platform.calls.filter((call) => call.path.endsWith('/artifact'))).toHaveLength(1);

    // The fake records completion when the request arrives; the agent logs it once the answer is back.
    await eventually(() => logged('stage completed').length === 2, 5_000, 'both completions logged');
    // The hub saw idle (start), busy (working) and idle again.
    await eventually(() => platform.hubStatuses[platform.hubStatuses.length - 1] === 'idle', 5_000, 'idle');
    expect(platform.hubStatuses[0]).toBe('idle');
    expect(platform.hubStatuses).toContain('busy');
    // One info line per step, with the stage and invocation and the step's duration.
    for (const msg of ['stage claimed', 'stage handler finished', 'stage completed']) {
      expect(logged(msg)).toHaveLength(2);
      expect(logged(msg)[0]).toMatchObject({
        stage_id: first.stage_id,
        invocation_id: 'inv_1',
        duration_ms: expect.any(Number),
      });
    }
    expect(logged('artifact published')).toHaveLength(1);
  });

  /** The agent's stage requests in order: `list`, `claims` (claim-next) or `<action> <stage>`. */
  const stageRequests = () =>
    platform.calls
      .filter((call) => call.path.startsWith('/api/v1/agents/me/workflow-stages'))
      .map((call) => {
        if (call.path.endsWith('/workflow-stages')) return 'list';
        if (call.path.endsWith('/claims')) return 'claims';
        return `${call.method === 'DELETE' ? 'clear' : call.path.split('/').pop()} ${call.stageId}`;
      })
      .filter((request) => !request.startsWith('heartbeat'));

  it('when a stage is assigned while the agent waits, then one claim-next claims it and it is never claimed again', async () => {
    await startAgent({ handler: async () => ({ summary: 'done' }) }).start();
    // The first poll lists (nothing held from before); the next ones claim.
    await eventually(
      () => platform.pendingPolls === 1 && platform.calls.some((call) => call.path.endsWith('/claims')),
      5_000,
      'a waiting claim-next',
    );
    const stage = platform.assign({ is_final: false });

    await eventually(() => platform.stages.get(stage.stage_id)?.state === 'completed', 5_000, 'completion');
    expect(platform.claimedNext.filter((ids) => ids.length > 0)).toEqual([[stage.stage_id]]);
    expect(platform.callsFor(stage.stage_id, 'claim')).toHaveLength(0);
    const requests = stageRequests();
    expect(requests[0]).toBe('list');
    expect(requests.slice(1, requests.indexOf(`complete ${stage.stage_id}`))).toEqual(
      requests.slice(1, requests.indexOf(`complete ${stage.stage_id}`)).map(() => 'claims'),
    );
    expect(logged('stage claimed')[0]).toMatchObject({ stage_id: stage.stage_id, claimed_by: 'claim_next' });
  });

  it('when the agent restarts while holding a claimed and a blocked stage, then its first listing resumes both', async () => {
    // What a previous process of this agent left: one stage claimed, one blocked.
    const claimed = platform.assign({ is_final: false, state: 'claimed' });
    const blocked = platform.assign({ is_final: false, state: 'blocked' });
    const seen: string[] = [];
    await startAgent({
      handler: async (ctx) => {
        seen.push(ctx.stage.stage_id);
        return { summary: 'done' };
      },
    }).start();

    await eventually(
      () => [claimed, blocked].every((s) => platform.stages.get(s.stage_id)?.state === 'completed'),
      5_000,
      'both stages',
    );
    expect(seen.sort()).toEqual([claimed.stage_id, blocked.stage_id].sort());
    const requests = stageRequests();
    expect(requests[0]).toBe('list');
    expect(
      requests
        .filter((r) => r !== 'claims')
        .slice(0, 6)
        .sort(),
    ).toEqual(
      [
        'list',
        `claim ${claimed.stage_id}`,
        `complete ${claimed.stage_id}`,
        `clear ${blocked.stage_id}`,
        `claim ${blocked.stage_id}`,
        `complete ${blocked.stage_id}`,
      ].sort(),
    );
    expect(platform.claimedNext.flat()).toEqual([]);
  });

  it('while the agent holds a blocked stage, then it lists (not claims) and still picks up new stages', async () => {
    const stuck = platform.assign({ is_final: false });
    await startAgent({
      handler: async (ctx) => {
        if (ctx.stage.stage_id === stuck.stage_id) throw new StageBlockedError('Waiting for a person.');
        return { summary: 'done' };
      },
    }).start();
    await eventually(() => platform.callsFor(stuck.stage_id, 'blocker').length === 1, 5_000, 'the blocker');
    const blockedAt = platform.calls.length;
    const listingsAfter = () =>
      platform.calls.slice(blockedAt).filter((call) => call.path.endsWith('/workflow-stages')).length;
    // A claim-next already waiting when the stage was held ends its wait (1 s here); listings follow.
    await eventually(() => listingsAfter() >= 3, 5_000, 'listings while a stage is held');
    expect(
      platform.calls.slice(blockedAt).filter((call) => call.path.endsWith('/claims')).length,
    ).toBeLessThanOrEqual(1);

    // A new stage is seen by a listing and claimed on its own; the held one is left alone.
    const next = platform.assign({ is_final: false });
    await eventually(() => platform.stages.get(next.stage_id)?.state === 'completed', 5_000, 'the new stage');
    expect(platform.callsFor(stuck.stage_id, 'claim')).toHaveLength(1);
    expect(platform.stages.get(stuck.stage_id)?.state).toBe('blocked');
  });

  it('when the handler throws StageBlockedError, then the blocker is reported and the stage is kept, not completed or re-run', async () => {
    const stage = platform.assign();
    let runs = 0;
    await startAgent({
      handler: async () => {
        runs += 1;
        throw new StageBlockedError('The repository credential is missing; add it in the project settings.');
      },
    }).start();

    await eventually(() => platform.callsFor(stage.stage_id, 'blocker').length === 1, 5_000, 'the blocker');
    expect(platform.callsFor(stage.stage_id, 'blocker')[0]?.body).toEqual({
      reason: 'The repository credential is missing; add it in the project settings.',
    });
    // Several poll rounds later: still held, never re-claimed, never completed.
    await sleep(400);
    expect(runs).toBe(1);
    expect(platform.callsFor(stage.stage_id, 'claim')).toHaveLength(1);
    expect(platform.callsFor(stage.stage_id, 'complete')).toHaveLength(0);
    expect(platform.stages.get(stage.stage_id)?.state).toBe('blocked');
  });

  it('when a StageBlockedError asks for a retry, then the blocker is cleared and the stage is tried again after the delay', async () => {
    const stage = platform.assign({ is_final: false });
    let runs = 0;
    await startAgent({
      handler: async () => {
        runs += 1;
        if (runs === 1)
          throw new StageBlockedError('Waiting for the upstream export.', { retryAfterSeconds: 0.2 });
        return { summary: 'The export arrived; done.' };
      },
    }).start();

    await eventually(() => platform.stages.get(stage.stage_id)?.state === 'completed', 5_000, 'completion');
    expect(runs).toBe(2);
    const actions = platform
      .callsFor(stage.stage_id)
      .map((call) => `${call.method} ${call.path.split('/').pop()}`);
    expect(actions.filter((a) => a !== 'POST heartbeat')).toEqual([
      'POST claim',
      'POST blocker',
      'DELETE blocker',
      'POST claim',
      'POST complete',
    ]);
    expect(platform.evidence.get(stage.stage_id)).toHaveLength(1);
  });

  it('when the handler fails with an error, then the blocker carries its message without the stack or secrets', async () => {
    const stage = platform.assign();
    await startAgent({
      handler: async () => {
        throw new Error(
          `upstream said no to Bearer ${TOKEN} and key svc_abcdefghijkl_ABCDEFGHIJKLMNOPQRSTUV`,
        );
      },
    }).start();

    await eventually(() => platform.callsFor(stage.stage_id, 'blocker').length === 1, 5_000, 'the blocker');
    const { reason } = platform.callsFor(stage.stage_id, 'blocker')[0]?.body as { reason: string };
    expect(reason).toContain('the stage handler failed: upstream said no to Bearer');
    expect(reason).not.toContain(TOKEN);
    expect(reason).not.toContain('ABCDEFGHIJKLMNOPQRSTUV');
    expect(reason).not.toMatch(/\n|\bat .*\.ts:\d+/);
  });

  it('when the claim answers 409 stage_reassigned, then the agent drops the stage and works the others', async () => {
    const taken = platform.assign({ is_final: false });
    const mine = platform.assign({ is_final: false });
    platform.inject({
      method: 'POST',
      path: new RegExp(`/${taken.stage_id}/claim$`),
      status: 409,
      code: 'stage_reassigned',
      times: 100,
    });
    const seen: string[] = [];
    await startAgent({
      handler: async (ctx) => {
        seen.push(ctx.stage.stage_id);
        return { summary: 'done' };
      },
    }).start();

    await eventually(
      () => platform.stages.get(mine.stage_id)?.state === 'completed',
      5_000,
      'the other stage',
    );
    await sleep(300);
    expect(seen).toEqual([mine.stage_id]);
    // Dropped after the first answer: no retries, no blocker, nothing else about it.
    expect(platform.callsFor(taken.stage_id)).toHaveLength(1);
    expect(logged('stage dropped: it is no longer ours')[0]).toMatchObject({
      stage_id: taken.stage_id,
      code: 'stage_reassigned',
    });
  });

  it('when a heartbeat answers 409 stage_reassigned mid-work, then the handler signal aborts and nothing more is sent for the stage', async () => {
    const stage = platform.assign();
    let aborted = false;
    await startAgent({
      handler: async (ctx) => {
        platform.reassigned.add(ctx.stage.stage_id);
        await ctx.progress('halfway');
        await new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          ctx.signal.addEventListener('abort', () => resolve());
        });
        aborted = ctx.signal.aborted;
        return { payload: {} };
      },
    }).start();

    await eventually(() => aborted, 5_000, 'the handler to see the abort');
    await sleep(200);
    const actions = platform.callsFor(stage.stage_id).map((call) => call.path.split('/').pop());
    expect(actions).toEqual(['claim', 'heartbeat']);
  });

  it('when the platform answers 5xx, then the agent backs off, retries and still finishes', async () => {
    const stage = platform.assign({
      artifact_schema: { name: 'r', version: '1', json_schema: REPORT_SCHEMA },
    });
    platform.inject({ method: 'GET', path: /\/workflow-stages$/, status: 503, times: 2 });
    platform.inject({ method: 'POST', path: /\/claim$/, status: 503, times: 2 });
    platform.inject({ method: 'POST', path: /\/artifact$/, status: 502 });
    // A stage that is not final ends with …/complete (the final one with its publication).
    const earlier = platform.assign({ is_final: false });
    platform.inject({ method: 'POST', path: /\/complete$/, status: 500 });
    await startAgent().start();

    await eventually(() => platform.stages.get(stage.stage_id)?.state === 'completed', 10_000, 'completion');
    await eventually(
      () => platform.stages.get(earlier.stage_id)?.state === 'completed',
      10_000,
      'completion',
    );
    expect(platform.published.has('inv_1')).toBe(true);
    // Two refused claims, then one that took, for each stage.
    expect(platform.calls.filter((call) => call.path.endsWith('/claim'))).toHaveLength(4);
    expect(logged('platform call failed; retrying').length).toBeGreaterThanOrEqual(4);
    expect(logged('listing stages failed; retrying')).toHaveLength(2);
  });

  it('when the workflow API is not reachable at all, then the loop keeps retrying instead of dying', async () => {
    const vacant = new FakePlatform(TOKEN);
    await vacant.start();
    const deadUrl = vacant.url;
    await vacant.close();
    startAgent({ workflowUrl: deadUrl });
    await agent?.start();
    await sleep(400);
    expect(logged('listing stages failed; retrying').length).toBeGreaterThanOrEqual(2);
    expect(logged('listing stages failed; retrying')[0]).toMatchObject({ error: { code: 'ECONNREFUSED' } });
  });

  it('when the published payload does not match the schema (422), then the stage gets a blocker naming the errors and is not completed', async () => {
    const stage = platform.assign({
      artifact_schema: { name: 'r', version: '1', json_schema: REPORT_SCHEMA },
    });
    await startAgent({ handler: async () => ({ payload: { title: 42 } }) }).start();

    await eventually(() => platform.callsFor(stage.stage_id, 'blocker').length === 1, 5_000, 'the blocker');
    const { reason } = platform.callsFor(stage.stage_id, 'blocker')[0]?.body as { reason: string };
    expect(reason).toMatch(/^the artifact was rejected by its schema: .*payload/);
    expect(platform.callsFor(stage.stage_id, 'complete')).toHaveLength(0);
  });

  it('when more stages are open than the concurrency, then at most that many handlers run at once', async () => {
    for (let i = 0; i < 5; i += 1) platform.assign({ is_final: false });
    let running = 0;
    let peak = 0;
    await startAgent({
      concurrency: 2,
      handler: async () => {
        running += 1;
        peak = Math.max(peak, running);
        await sleep(150);
        running -= 1;
        return { summary: 'done' };
      },
    }).start();

    await eventually(
      () => [...platform.stages.values()].every((s) => s.state === 'completed'),
      10_000,
      'all stages',
    );
    expect(peak).toBe(2);
  });

  it('when stop() is called during a pending long poll, then it returns within 2 s and the poll is aborted', async () => {
    await startAgent({ pollWaitSeconds: 30 }).start();
    await eventually(() => platform.pendingPolls === 1, 5_000, 'a pending long poll');

    const began = Date.now();
    await agent?.stop();
    expect(Date.now() - began).toBeLessThan(2_000);
    await eventually(() => platform.abandonedPolls === 1, 2_000, 'the server to see the poll closed');
    expect(logged('reference agent stopped')).toHaveLength(1);
  });

  it('when stop() is called while a stage is in flight, then it waits up to the bound, aborts the handler and resolves', async () => {
    platform.assign();
    let sawAbort = false;
    await startAgent({
      stopTimeoutMs: 200,
      handler: async (ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        sawAbort = true;
        return { payload: {} };
      },
    }).start();
    await eventually(() => platform.calls.some((call) => call.path.endsWith('/claim')), 5_000, 'the claim');

    const began = Date.now();
    await agent?.stop();
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(sawAbort).toBe(true);
    expect(logged('stage abandoned: the agent is stopping')).toHaveLength(1);
    expect(
      platform.calls.filter((call) => call.path.endsWith('/complete') || call.path.endsWith('/blocker')),
    ).toHaveLength(0);
  });

  it('when the hub refuses the token, then start() rejects without naming the token', async () => {
    const wrong = createReferenceAgent({
      token: 'not-the-token-the-fake-platform-expects',
      hubUrl: platform.url,
      workflowUrl: platform.url,
      logger: createLogger({ name: 't', level: 'silent' }),
    });
    await expect(wrong.start()).rejects.toThrow('the hub refused AGENT_TOKEN (401 token_invalid)');
    await wrong.stop();
  });
});
