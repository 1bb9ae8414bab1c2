import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { unwrap } from '@svc/contracts';
import { ConflictError, Webhook, Workflow } from '@svc/sdk';
import type { Invocation, InvocationListParams, StageAssignment } from '@svc/sdk';
import { eventually, sleep, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';

/**
 * The invocation lifecycle against real processes (hub, Workflow API, worker): list and filter, cancel a
 * running invocation, the three failure paths, and their `invocation.cancelled` / `invocation.failed`
 * deliveries signed to a local receiver (the stack's development setting allows loopback receivers). The test
 * plays the stage owners itself with real agent tokens: an agent started at the hub and heartbeating is on the
 * roster as running, and acts through the Workflow API's agent routes.
 */
jest.setTimeout(120_000);

let s: RunStack<Database>;
let workflow: Workflow;
let receiver: Server;
let receiverUrl = '';
/** Verifies what the receiver got; every poll reads every delivery again, so repeats are not flagged. */
let deliveries: Webhook;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/deliveries`;
  s = await startRunStack({
    database: (url) => createDatabase(url, { poolSize: 2 }),
    env: {
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_DELIVERY_RETRY_SCHEDULE: '0.2,0.5,1,1,1',
      WORKFLOW_DELIVERY_TIMEOUT_MS: '3000',
      // No test here relies on a stall: a long deadline keeps a slow claim on a loaded machine from being one.
      WORKFLOW_STAGE_STALL_SECONDS: '120',
    },
  });
  const subscription = unwrap(
    await s.wf.POST('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
      params: { path: { projectId: s.project.id } },
      body: { url: receiverUrl, events: ['invocation.cancelled', 'invocation.failed'] },
    }),
  ) as { signing_secret: string };
  deliveries = new Webhook(subscription.signing_secret, { dedupe: false });
  workflow = new Workflow({
    baseUrl: s.workflowUrl,
    apiKey: s.apiKey,
    projectId: s.project.id,
    maxRetries: 0,
  });
}, 120_000);

afterAll(async () => {
  await s?.close();
  await new Promise((r) => receiver?.close(r));
}, 30_000);

/** What `check` answers once it answers something, asked every 150 ms for at most 45 s. */
function soon<T>(what: string, check: () => Promise<T>) {
  return eventually(check, 45_000, what, { intervalMs: 150 });
}

const read = (invocationId: string) => workflow.invocations.get(invocationId);

/** The invocation once `predicate` holds for it. */
function invocationWhen(invocationId: string, predicate: (inv: Invocation) => boolean) {
  return soon(`invocation ${invocationId}`, async () => {
    const inv = await read(invocationId);
    return predicate(inv) && inv;
  });
}

/** The verified delivery of `event` for the invocation, once the receiver got it. */
function deliveryOf(invocationId: string, event: string) {
  return soon(`${event} of ${invocationId}`, async () => {
    for (const r of received) {
      const body = (await deliveries.verify(r.body, r.headers)).event;
      if (body.type === 'delivery_subscription.test') continue;
      if (body.type === event && body.data.invocation_id === invocationId) return body;
    }
    return undefined;
  });
}

let routes = 0;
/** A contract (with a registered schema) whose `stages` stages (one unless told) need `capability`. */
async function route(capability: string, guardrails: Record<string, unknown> = {}, stages = 1) {
  routes += 1;
  const name = `lifecycle-${routes}`;
  unwrap(
    await s.wf.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
      params: { path: { workspaceId: s.workspace.id } },
      body: {
        project_id: s.project.id,
        name,
        version: '1.0.0',
        json_schema: {
          type: 'object',
          required: ['title'],
          properties: { title: { type: 'string' } },
        },
      },
    }),
  );
  const contract = unwrap(
    await s.wf.POST('/api/v1/projects/{projectId}/workflow/contracts', {
      params: { path: { projectId: s.project.id } },
      body: {
        name: `Lifecycle ${routes}`,
        priority: 10,
        fallback: false,
        is_active: true,
        classifier: { intentContains: [`lifecycle ${routes} job`] },
        template: {
          key: `lifecycle-flow-${routes}`,
          version: '1.0.0',
          required_capabilities: [],
          artifact_schema: { name, version: '1.0.0' },
          guardrails: { human_approval_required: false, ...guardrails } as never,
          stages: Array.from({ length: stages }, (_, i) => ({
            key: i === 0 ? 'work' : `work-${i + 1}`,
            title: i === 0 ? 'Do the work' : `Do the work, part ${i + 1}`,
            required_capabilities: [capability],
          })),
        },
      },
    }),
  ) as { contract_id: string };
  return {
    contractId: contract.contract_id,
    schemaName: name,
    phrase: `lifecycle ${routes} job`,
    templateKey: `lifecycle-flow-${routes}`,
  };
}

async function start(intent: string) {
  const { invocation } = await workflow.invocations.create({ intent });
  const launched = await workflow.invocations.launchWithReport(invocation.invocation_id);
  return { id: invocation.invocation_id, launched };
}

/** An agent of the project, started at the hub and heartbeating: the test acts as it. */
async function manualAgent(capabilities: string[]) {
  const agent = await s.addAgent(capabilities, { start: false });
  const auth = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
  const hubBeat = async () => {
    const res = await fetch(`${s.hubUrl}/api/v1/agents/me/heartbeat`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ status: 'idle' }),
    });
    expect(res.status).toBe(200);
  };
  await hubBeat();
  const stageCall = async (stageId: string, action: string, body?: unknown) => {
    const res = await fetch(`${s.workflowUrl}/api/v1/agents/me/workflow-stages/${stageId}/${action}`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(body ?? {}),
    });
    return { status: res.status, body: (await res.json()) as { code?: string; data: StageAssignment } };
  };
  const stages = async () => {
    const res = await fetch(`${s.workflowUrl}/api/v1/agents/me/workflow-stages?wait=2`, { headers: auth });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: StageAssignment[] }).data;
  };
  return { id: agent.id, token: agent.token, hubBeat, stageCall, stages };
}

/** The hub handoffs of a stage (one per owner it was given to), read through the hub's public API. */
async function stageHandoffs(stageId: string) {
  return unwrap(
    await s.hub.GET('/api/v1/workspaces/{workspace}/handoffs', {
      params: {
        path: { workspace: s.workspace.id },
        query: { reference_kind: 'workflow_stage', reference_id: stageId },
      },
    }),
  );
}

/** Waits until every hub handoff of the stage is cancelled (the engine closes them after the commit). */
function handoffsCancelled(stageId: string, count: number) {
  return soon(`the handoffs of stage ${stageId} to be cancelled at the hub`, async () => {
    const handoffs = await stageHandoffs(stageId);
    return handoffs.length === count && handoffs.every((h) => h.status === 'cancelled') && handoffs;
  });
}

describe('listing invocations', () => {
  test('filters by state, attention, contract, template and created range combine, and the cursor pages newest first', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const a = await route('list-cap-a');
    const b = await route('list-cap-b');
    const ids: string[] = [];
    for (const intent of [`${a.phrase} one`, `${a.phrase} two`, `${b.phrase} three`, 'matches nothing zzz']) {
      const { invocation } = await workflow.invocations.create({ intent });
      ids.push(invocation.invocation_id);
      await sleep(5);
    }
    const middle = (await read(ids[2]!)).created_at;
    // The unmatched one is launched: refused, `blocked`.
    await workflow.invocations.launch(ids[3]!).catch(() => undefined);

    const list = async (filter: InvocationListParams) =>
      (await workflow.invocations.list({ created_since: since, ...filter })).data.map((i) => i.invocation_id);

    // Newest first; other tests' invocations may be created meanwhile, so only these four are compared.
    expect((await list({})).filter((id) => ids.includes(id))).toEqual([...ids].reverse());
    expect(await list({ contract_id: a.contractId })).toEqual([ids[1], ids[0]]);
    expect(await list({ template_key: b.templateKey })).toEqual([ids[2]]);
    expect(await list({ state: ['blocked'] })).toEqual([ids[3]]);
    expect(await list({ attention: ['blocked'], state: ['blocked', 'received'] })).toEqual([ids[3]]);
    expect(await list({ state: ['received'], contract_id: a.contractId })).toEqual([ids[1], ids[0]]);
    expect(await list({ created_since: middle, contract_id: a.contractId })).toEqual([]);
    expect(await list({ created_until: middle, contract_id: a.contractId })).toEqual([ids[1], ids[0]]);

    const page1 = await workflow.invocations.list({
      created_since: since,
      contract_id: a.contractId,
      limit: 1,
    });
    expect(page1.data.map((i) => i.invocation_id)).toEqual([ids[1]]);
    expect(page1.data[0]).toMatchObject({ intent: `${a.phrase} two`, state: 'received' });
    const page2 = await workflow.invocations.list({
      created_since: since,
      contract_id: a.contractId,
      limit: 1,
      cursor: page1.nextCursor!,
    });
    expect(page2.data.map((i) => i.invocation_id)).toEqual([ids[0]]);
    expect(page2.nextCursor).toBeNull();

    const bad = await s.wf.GET('/api/v1/projects/{projectId}/workflow/invocations', {
      params: { path: { projectId: s.project.id }, query: { cursor: 'not-a-cursor!' } },
    });
    expect(bad.response.status).toBe(400);
    expect((bad.error as { code?: string }).code).toBe('cursor_invalid');
  });
});

describe('a run of two stages', () => {
  test("every stage answer carries the stage's place in the run and the pinned schema; completing the last stage after the publication changes nothing", async () => {
    const r = await route('two-stage-cap', {}, 2);
    const agent = await manualAgent(['two-stage-cap']);
    const { id } = await start(`${r.phrase} in two parts`);
    const place = { invocation_id: id, stage_count: 2 };
    const schema = {
      name: r.schemaName,
      version: '1.0.0',
      json_schema: expect.objectContaining({ required: ['title'] }),
    };
    const first = await soon('the first stage to reach its owner', async () =>
      (await agent.stages()).find((st) => st.invocation_id === id),
    );
    expect(first).toMatchObject({
      ...place,
      key: 'work',
      position: 1,
      is_final: false,
      artifact_schema: schema,
    });
    for (const action of ['claim', 'heartbeat', 'complete']) {
      const answer = await agent.stageCall(first.stage_id, action);
      expect(answer.status).toBe(200);
      expect(answer.body.data).toMatchObject({
        ...place,
        position: 1,
        is_final: false,
        artifact_schema: schema,
      });
    }
    const second = await soon('the second stage to reach its owner', async () =>
      (await agent.stages()).find((st) => st.invocation_id === id && st.position === 2),
    );
    expect(second).toMatchObject({ ...place, key: 'work-2', is_final: true, artifact_schema: schema });
    const claimed = await agent.stageCall(second.stage_id, 'claim');
    expect(claimed.body.data).toMatchObject({
      ...place,
      state: 'claimed',
      is_final: true,
      artifact_schema: schema,
    });

    const published = await fetch(
      `${s.workflowUrl}/api/v1/projects/${s.project.id}/workflow/invocations/${id}/artifact`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ payload: { title: 'Both parts' }, summary: 'done' }),
      },
    );
    expect(published.status).toBe(201);
    const completed = await agent.stageCall(second.stage_id, 'complete', { summary: 'done' });
    expect(completed.status).toBe(200);
    expect(completed.body.data).toMatchObject({ ...place, state: 'completed', is_final: true });
    // The completion is audited; the invocation, completed by the publication, is left as it is and no
    // reconcile is pending for it.
    expect(
      await s.database.prisma.auditEvent.count({
        where: { targetId: second.stage_id, action: 'stage.completed' },
      }),
    ).toBe(1);
    await soon(
      'no outbox row of the invocation to be pending',
      async () =>
        (await s.database.prisma.outboxEntry.count({ where: { invocationId: id, processedAt: null } })) === 0,
    );
    const done = await read(id);
    expect(done.state).toBe('completed');
    expect(done.stages.map((st) => st.state)).toEqual(['completed', 'completed']);
  });
});

describe('cancel', () => {
  test('a running invocation: cancelled, its stage closed, the owner released, invocation.cancelled delivered; the owner got the intent as sent', async () => {
    const r = await route('cancel-cap');
    const agent = await manualAgent(['cancel-cap']);
    const intent = `Please run ${r.phrase.toUpperCase()} for INC-4711 — «Kunde»,  ASAP!`;
    const { id, launched } = await start(intent);
    expect(launched.launch.outcome).toBe('accepted');
    const stage = await soon('the stage to reach its owner', async () =>
      (await agent.stages()).find((st) => st.invocation_id === id),
    );
    expect(stage.intent).toBe(intent);
    expect((await agent.stageCall(stage.stage_id, 'claim')).status).toBe(200);
    const running = await invocationWhen(id, (inv) => inv.state === 'running');
    expect(running.intent).toBe(intent);

    const cancelled = await workflow.invocations.cancel(id, { reason: 'Not needed any more' });
    expect(cancelled).toMatchObject({
      state: 'cancelled',
      attention: 'none',
      current_stage: null,
      cancellation: { cancelled_by: { kind: 'api_key' }, reason: 'Not needed any more' },
    });
    expect(cancelled.stages.map((st) => st.state)).toEqual(['cancelled']);
    // Released: the stage is no longer the agent's, and acting on it is refused.
    expect((await agent.stages()).find((st) => st.invocation_id === id)).toBeUndefined();
    const beat = await agent.stageCall(stage.stage_id, 'heartbeat');
    expect(beat.status).toBe(409);
    expect(beat.body.code).toBe('stage_not_open');
    const run = await s.database.prisma.workflowRun.findUniqueOrThrow({ where: { invocationId: id } });
    expect(run.state).toBe('cancelled');
    expect(run.endedAt).not.toBeNull();

    const event = await deliveryOf(id, 'invocation.cancelled');
    expect(event.data).toMatchObject({ invocation_id: id, state: 'cancelled' });

    // The stage's hub handoff, claimed by the owner, is cancelled at the hub, audited with the reason.
    const [handoff] = await handoffsCancelled(stage.stage_id, 1);
    expect(handoff).toMatchObject({ assignee_agent_id: agent.id, cancelled_at: expect.any(String) });
    const hubAudit = unwrap(
      await s.hub.GET('/api/v1/workspaces/{workspace}/audit-events', {
        params: { path: { workspace: s.workspace.id }, query: { target_id: handoff!.id } },
      }),
    ) as { action: string; data: Record<string, unknown> }[];
    expect(hubAudit.filter((e) => e.action === 'handoff.cancelled')).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ to: 'cancelled', reason: 'invocation_cancelled' }),
      }),
    ]);
    expect(
      await s.database.prisma.handoffClosure.findUniqueOrThrow({ where: { handoffId: handoff!.id } }),
    ).toMatchObject({ reason: 'invocation_cancelled', outcome: 'cancelled', closedAt: expect.any(Date) });

    // Cancelling again changes nothing.
    const again = await workflow.invocations.cancel(id);
    expect(again.updated_at).toBe(cancelled.updated_at);
    expect(
      await s.database.prisma.auditEvent.count({ where: { targetId: id, action: 'invocation.cancelled' } }),
    ).toBe(1);
  });

  test('a blocked invocation can be cleaned up; a failed one is 409 invocation_terminal', async () => {
    const { invocation } = await workflow.invocations.create({
      intent: 'this matches no contract at all qqq',
    });
    const id = invocation.invocation_id;
    const refused = await workflow.invocations.launchWithReport(id).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 409, code: 'launch_blocked' });
    expect((await read(id)).state).toBe('blocked');
    const cancelled = await workflow.invocations.cancel(id);
    expect(cancelled.state).toBe('cancelled');
    await deliveryOf(id, 'invocation.cancelled');

    const r = await route('nobody-has-this-r', { artifact_rejections_allowed: 0 });
    const failed = await start(`${r.phrase} to fail`);
    await invocationWhen(failed.id, (inv) => inv.run_id !== null);
    await s.wf.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact', {
      params: { path: { projectId: s.project.id, invocationId: failed.id } },
      body: { payload: { title: 42 } },
    });
    await invocationWhen(failed.id, (inv) => inv.state === 'failed');
    const error = await workflow.invocations.cancel(failed.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'invocation_terminal' });
  });
});

describe('failure', () => {
  test('a stage failed by its owners beyond the template retries: failed stage_failed, invocation.failed delivered', async () => {
    const r = await route('flaky-cap', { stage_failure_retries: 1 });
    const first = await manualAgent(['flaky-cap']);
    const second = await manualAgent(['flaky-cap']);
    const { id } = await start(`${r.phrase} that breaks`);
    const owners = [first, second];
    const firstOwner = await soon('the first owner', async () => {
      for (const agent of owners) {
        const stage = (await agent.stages()).find((st) => st.invocation_id === id);
        if (stage) return { agent, stage };
      }
      return undefined;
    });
    const retried = await firstOwner.agent.stageCall(firstOwner.stage.stage_id, 'fail', {
      reason: 'upstream API answered 500',
    });
    expect(retried.status).toBe(200);
    expect(retried.body.data.state).toBe('pending');
    expect((await read(id)).state).not.toBe('failed');

    const other = owners.find((a) => a !== firstOwner.agent)!;
    const reassigned = await soon('the stage to reach the other owner', async () =>
      (await other.stages()).find((st) => st.invocation_id === id),
    );
    const refused = await firstOwner.agent.stageCall(firstOwner.stage.stage_id, 'claim');
    expect(refused.body.code).toBe('stage_reassigned');
    const final = await other.stageCall(reassigned.stage_id, 'fail', { reason: 'still broken' });
    expect(final.status).toBe(200);
    expect(final.body.data.state).toBe('failed');

    const failed = await read(id);
    expect(failed).toMatchObject({
      state: 'failed',
      attention: 'failed',
      failure: { reason: 'stage_failed', stage_key: 'work' },
    });
    expect(failed.failure!.message).toMatch(/still broken/);
    expect(failed.stages[0]).toMatchObject({ state: 'failed', attempts: 2 });
    const event = await deliveryOf(id, 'invocation.failed');
    expect(event.data).toMatchObject({
      state: 'failed',
      failure: { reason: 'stage_failed', stage_key: 'work' },
    });

    // Both owners' hub handoffs are cancelled: the first when the stage was taken back for a retry, the
    // second when the invocation failed.
    const handoffs = await handoffsCancelled(reassigned.stage_id, 2);
    expect(handoffs.map((h) => h.assignee_agent_id).sort()).toEqual([first.id, second.id].sort());
    const closures = await s.database.prisma.handoffClosure.findMany({ where: { invocationId: id } });
    expect(closures.map((c) => [c.handoffId, c.reason, c.outcome]).sort()).toEqual(
      handoffs
        .map((h) => [
          h.id,
          h.assignee_agent_id === firstOwner.agent.id ? 'stage_released' : 'invocation_failed',
          'cancelled',
        ])
        .sort(),
    );
  });

  test('a run past the template deadline: failed run_deadline_exceeded, invocation.failed delivered', async () => {
    const r = await route('nobody-has-this-d', { run_deadline_seconds: 2 });
    const { id, launched } = await start(`${r.phrase} too slow`);
    expect(launched.launch.outcome).toBe('accepted_waiting_for_owner');
    const failed = await invocationWhen(id, (inv) => inv.state === 'failed');
    expect(failed.failure).toMatchObject({ reason: 'run_deadline_exceeded', stage_key: 'work' });
    expect(failed.stages.map((st) => st.state)).toEqual(['skipped']);
    const event = await deliveryOf(id, 'invocation.failed');
    expect(event.data.failure).toMatchObject({ reason: 'run_deadline_exceeded' });
  });

  test('an artifact rejected more often than the template allows: failed artifact_rejections_exceeded', async () => {
    const r = await route('nobody-has-this-a', { artifact_rejections_allowed: 1 });
    const { id } = await start(`${r.phrase} bad output`);
    await invocationWhen(id, (inv) => inv.run_id !== null);
    const publish = () =>
      s.wf.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact', {
        params: { path: { projectId: s.project.id, invocationId: id } },
        body: { payload: { title: 42 } },
      });
    expect((await publish()).response.status).toBe(422);
    expect((await read(id)).state).toBe('running');
    expect((await publish()).response.status).toBe(422);
    const failed = await read(id);
    expect(failed).toMatchObject({ state: 'failed', failure: { reason: 'artifact_rejections_exceeded' } });
    const event = await deliveryOf(id, 'invocation.failed');
    expect(event.data.failure).toMatchObject({ reason: 'artifact_rejections_exceeded' });
    // Nothing can be published into a failed invocation.
    expect((await publish()).response.status).toBe(409);
  });
});

describe('closing stage handoffs at the hub', () => {
  test('a handoff whose cancel did not get through (hub down, process died after the commit) is cancelled by the sweeper', async () => {
    const agent = await manualAgent(['sweeper-cap']);
    const handoff = unwrap(
      await s.hub.POST('/api/v1/workspaces/{workspace}/handoffs', {
        params: { path: { workspace: s.workspace.id } },
        body: { title: 'A stage handoff left open', project_id: s.project.id, assignee_agent_id: agent.id },
      }),
    );
    // As left behind by an ending whose after-commit cancel failed twice: due again now.
    await s.database.prisma.handoffClosure.create({
      data: {
        handoffId: handoff.id,
        invocationId: 'inv_left_behind',
        stageId: 'stg_left_behind',
        reason: 'invocation_cancelled',
        attempts: 2,
        nextAttemptAt: new Date(Date.now() - 1000),
      },
    });
    await soon('the sweeper to cancel the handoff', async () => {
      const read = unwrap(
        await s.hub.GET('/api/v1/handoffs/{handoffId}', { params: { path: { handoffId: handoff.id } } }),
      );
      return read.status === 'cancelled' && read;
    });
    await soon('the closure to be confirmed', async () => {
      const row = await s.database.prisma.handoffClosure.findUniqueOrThrow({
        where: { handoffId: handoff.id },
      });
      return row.closedAt && row;
    }).then((row) => expect(row).toMatchObject({ outcome: 'cancelled', attempts: 3 }));
  });
});
