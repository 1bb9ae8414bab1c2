import { randomUUID } from 'node:crypto';
import { Workflow } from '@svc/sdk';
import type { Invocation } from '@svc/sdk';
import { eventually, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import type { WorkflowApi } from '@svc/contracts';

type RunLimits = WorkflowApi.components['schemas']['RunLimits'];
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- problem bodies and data alike
type Body = Record<string, any>;

// Real processes on a shared 2-core machine: generous per-test bounds.
jest.setTimeout(120_000);

let s: RunStack;
let workflow: Workflow;

beforeAll(async () => {
  s = await startRunStack();
  workflow = new Workflow({
    baseUrl: s.workflowUrl,
    apiKey: s.apiKey,
    projectId: s.project.id,
    maxRetries: 0,
  });
}, 120_000);

afterAll(async () => {
  await s?.close();
}, 30_000);

const limitsUrl = () => `${s.workflowUrl}/api/v1/projects/${s.project.id}/workflow/run-limits`;

async function patchLimits(body: unknown, credential: Record<string, string> | null = null) {
  const res = await fetch(limitsUrl(), {
    method: 'PATCH',
    headers: {
      ...(credential ?? { authorization: `Bearer ${s.ownerToken}` }),
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: (await res.json()) as Body,
  };
}

async function readLimits() {
  const res = await fetch(limitsUrl(), { headers: { 'x-api-key': s.apiKey } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: RunLimits }).data;
}

async function invokeAndLaunch(intent: string): Promise<Invocation> {
  const { invocation } = await workflow.invocations.create(
    { intent },
    { idempotencyKey: randomUUID(), correlationId: `corr-${randomUUID()}` },
  );
  return workflow.invocations.launch(invocation.invocation_id);
}

function invocationWhen(id: string, predicate: (inv: Invocation) => boolean, what: string) {
  let last: Invocation | undefined;
  return eventually(
    async () => {
      last = await workflow.invocations.get(id);
      return predicate(last) && last;
    },
    30_000,
    `${id}: ${what}`,
    { describe: () => `last: ${JSON.stringify(last)}` },
  );
}

const queuedOn = (code: string) => (inv: Invocation) =>
  inv.state === 'launching' && inv.blockers.some((b) => b.code === code);

describe('run limits settings', () => {
  test('when a limit is not a whole number from 1 to 10000 or a field is unknown, then 400 problem+json and nothing changes', async () => {
    for (const body of [
      { project_max_runs_in_progress: 0 },
      { project_max_runs_in_progress: 10_001 },
      { workspace_max_runs_in_progress: 1.5 },
      { project_max_runs_in_progress: 'two' },
      { max: 3 },
      {},
    ]) {
      const res = await patchLimits(body);
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect(res.body.code).toBe('validation_failed');
    }
    expect(await readLimits()).toMatchObject({
      project_max_runs_in_progress: null,
      workspace_max_runs_in_progress: null,
    });
  });

  test('when an API key or no credential changes limits, then 403 or 401; the owner sets and clears them', async () => {
    expect((await patchLimits({ project_max_runs_in_progress: 2 }, { 'x-api-key': s.apiKey })).status).toBe(
      403,
    );
    expect((await patchLimits({ project_max_runs_in_progress: 2 }, {})).status).toBe(401);
    const set = await patchLimits({ project_max_runs_in_progress: 2, workspace_max_runs_in_progress: 7 });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({
      project_id: s.project.id,
      workspace_id: s.workspace.id,
      project_max_runs_in_progress: 2,
      workspace_max_runs_in_progress: 7,
      project_runs_in_progress: 0,
      queued: 0,
    });
    const cleared = await patchLimits({
      project_max_runs_in_progress: null,
      workspace_max_runs_in_progress: null,
    });
    expect(cleared.body.data).toMatchObject({
      project_max_runs_in_progress: null,
      workspace_max_runs_in_progress: null,
    });
  });
});

describe('a reached run limit', () => {
  test('when the project is at its limit, then preflight shows the typed blocker, launches wait queued (never failed) and start oldest first as slots free', async () => {
    // Nobody holds this capability: a started run stays in progress (running, waiting for an owner).
    await s.seedRoute({
      intent: 'limited report',
      stages: [{ key: 'write', title: 'Write', required_capabilities: ['nobody-has-this'] }],
    });
    expect((await patchLimits({ project_max_runs_in_progress: 1 })).status).toBe(200);

    const first = await invokeAndLaunch('limited report');
    await invocationWhen(first.invocation_id, (inv) => inv.state === 'running', 'running');

    const pre = await workflow.invocations.preflight({ intent: 'limited report' });
    const limitBlocker = pre.blockers.find((b) => b.code === 'project_run_limit_reached');
    expect(limitBlocker).toMatchObject({ category: 'infrastructure_health', effect: 'waits_for_owner' });
    expect(limitBlocker?.recommended_action).toContain('run limit');
    expect(pre.can_launch).toBe(false);

    const second = await invokeAndLaunch('limited report');
    const third = await invokeAndLaunch('limited report');
    expect(second.state).not.toBe('failed');
    await invocationWhen(second.invocation_id, queuedOn('project_run_limit_reached'), 'queued');
    await invocationWhen(third.invocation_id, queuedOn('project_run_limit_reached'), 'queued');
    // The engine queued both (the launch answered first, with the same blocker).
    let limits: RunLimits | undefined;
    await eventually(
      async () => {
        limits = await readLimits();
        return limits.queued === 2;
      },
      30_000,
      'two launches queued',
      { describe: () => JSON.stringify(limits) },
    );
    expect(limits?.project_runs_in_progress).toBe(1);

    // The slot frees: the oldest queued launch starts, the other keeps waiting.
    await workflow.invocations.cancel(first.invocation_id, { reason: 'make room' });
    await invocationWhen(second.invocation_id, (inv) => inv.state === 'running', 'started');
    const still = await workflow.invocations.get(third.invocation_id);
    expect(queuedOn('project_run_limit_reached')(still)).toBe(true);

    // A higher limit lets the rest start.
    expect((await patchLimits({ project_max_runs_in_progress: 5 })).status).toBe(200);
    const started = await invocationWhen(third.invocation_id, (inv) => inv.state === 'running', 'started');
    expect(started.blockers.some((b) => b.code === 'project_run_limit_reached')).toBe(false);
    expect(await readLimits()).toMatchObject({ project_runs_in_progress: 2, queued: 0 });
  });

  test('when the workspace is at its limit, then the project’s launch waits on the workspace’s blocker', async () => {
    expect(
      (await patchLimits({ project_max_runs_in_progress: null, workspace_max_runs_in_progress: 2 })).status,
    ).toBe(200);
    // Two runs of the workspace are in progress from the test before.
    const queued = await invokeAndLaunch('limited report');
    await invocationWhen(queued.invocation_id, queuedOn('workspace_run_limit_reached'), 'queued');
    expect((await patchLimits({ workspace_max_runs_in_progress: null })).status).toBe(200);
    await invocationWhen(queued.invocation_id, (inv) => inv.state === 'running', 'started');
  });
});
