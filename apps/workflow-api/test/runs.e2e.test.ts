import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWorkflowClient } from '@svc/contracts';
import { ConflictError, verifyEnvelope, Workflow } from '@svc/sdk';
import type { Invocation, WaitOptions } from '@svc/sdk';
import { eventually, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';

// Real processes on a shared 2-core machine: generous per-test bounds.
jest.setTimeout(90_000);

let s: RunStack<Database>;
let workflow: Workflow;

beforeAll(async () => {
  s = await startRunStack({ database: (url) => createDatabase(url, { poolSize: 2 }) });
  workflow = new Workflow({
    baseUrl: s.workflowUrl,
    apiKey: s.apiKey,
    projectId: s.project.id,
    maxRetries: 0,
  });
  // A general-purpose agent: owns the stages that need no capability or `report`.
  await s.addAgent(['report']);
}, 90_000);

afterAll(async () => {
  await s?.close();
}, 30_000);

async function invokeAndLaunch(intent: string): Promise<Invocation> {
  const { invocation } = await workflow.invocations.create(
    { intent },
    { idempotencyKey: randomUUID(), correlationId: `corr-${randomUUID()}` },
  );
  return workflow.invocations.launch(invocation.invocation_id);
}

/** The invocation once `predicate` holds for it (within 20 s). */
async function invocationWhen(
  invocationId: string,
  predicate: (inv: Invocation) => boolean,
): Promise<Invocation> {
  let last: Invocation | undefined;
  return eventually(
    async () => {
      last = await workflow.invocations.get(invocationId);
      return predicate(last) && last;
    },
    20_000,
    `invocation ${invocationId}`,
    { describe: () => `last: ${JSON.stringify(last)}` },
  );
}

/** Its artifact, polled as a consumer does; attention is waited through, only `failed` and `cancelled` end it. */
function artifactOf(invocationId: string, options: Omit<WaitOptions, 'waitFor'>) {
  return workflow.invocations.waitForArtifact(invocationId, { ...options, waitFor: 'all' });
}

/** The workspace owner (a participant) through the SDK: approvals need one. */
function ownerWorkflow(): Workflow {
  return new Workflow({
    baseUrl: s.workflowUrl,
    token: s.ownerToken,
    projectId: s.project.id,
    maxRetries: 0,
  });
}

/** A handler module for the reference agent, written to a temporary file. */
function handlerModule(name: string, source: string): string {
  const file = path.join(os.tmpdir(), `svc-handler-${name}-${randomUUID()}.cjs`);
  writeFileSync(file, source);
  return file;
}

describe('the five steps with a live reference agent', () => {
  test('resolve → preflight → invoke → launch → consume yields a verified, schema-valid artifact', async () => {
    const route = await s.seedRoute({
      intent: 'quarterly sales report',
      stages: [
        { key: 'collect', title: 'Collect figures', required_capabilities: ['report'] },
        { key: 'write', title: 'Write the report', required_capabilities: ['report'] },
      ],
    });
    const pre = await workflow.invocations.preflight({ intent: 'Please do the quarterly sales report' });
    expect(pre).toMatchObject({ matched: true, route_ready: true });
    expect(pre.blockers.filter((b) => b.category === 'roster_ownership')).toEqual([]);

    const launched = await invokeAndLaunch('Please do the quarterly sales report');
    expect(['launching', 'running']).toContain(launched.state);
    // A ceiling, not a target (a run takes a few seconds): an agent that misses the wake-up of a new stage
    // learns of it within its poll wait (10 s here), once per stage.
    const { invocation, envelope } = await artifactOf(launched.invocation_id, {
      timeoutMs: 45_000,
      intervalMs: 50,
    });
    expect(invocation.state).toBe('completed');
    expect(invocation.route.contract_id).toBe(route.contractId);
    expect(invocation.artifact?.artifact_id).toBe(envelope.artifact_id);
    const verified = await verifyEnvelope(envelope, {
      projectId: s.project.id,
      invocationId: launched.invocation_id,
      workspaceId: s.workspace.id,
      runId: invocation.run_id!,
      schema: { name: 'report-1', versions: ['1.0.0'] },
    });
    expect(verified.provenance.template).toEqual({ key: 'flow-1', version: '1.0.0' });
    expect(verified.provenance.stages.map((st) => st.key)).toEqual(['collect', 'write']);
    expect(verified.created_by.kind).toBe('agent');

    // Both stages ran in order, each owned and timed; the latest handoff is the last stage's.
    const done = await invocationWhen(launched.invocation_id, (inv) =>
      inv.stages.every((st) => st.state === 'completed'),
    );
    expect(done.stages.map((st) => [st.key, st.position, st.state])).toEqual([
      ['collect', 1, 'completed'],
      ['write', 2, 'completed'],
    ]);
    for (const stage of done.stages) {
      expect(stage.owner_agent_id).toMatch(/^agt_/);
      expect(stage.handoff_id).toBeTruthy();
      expect(stage.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(done.latest_handoff?.stage_key).toBe('write');
    expect(done.attention).toBe('none');
    // The envelope's provenance carries each completed stage's real completion time: the first stage's when
    // its owner completed it, the final stage's at the publication that completed it.
    expect(verified.provenance.stages.map((st) => st.completed_at)).toEqual(
      done.stages.map((st) => st.completed_at),
    );
    for (const stage of verified.provenance.stages) {
      expect(Date.parse(stage.completed_at ?? '')).toBeLessThanOrEqual(Date.parse(envelope.created_at));
    }
    const fetched = await workflow.invocations.artifact(launched.invocation_id);
    expect(fetched).toEqual(envelope);
    // Each stage's `stage.result` evidence is stored once: the first stage's with its completion, the final
    // stage's with the publication that completed it (the agent sends neither …/evidence nor …/complete then).
    const stored = await s.database.prisma.runStage.findMany({
      where: { invocationId: launched.invocation_id },
      orderBy: { position: 'asc' },
    });
    const evidence = await s.database.prisma.stageEvidence.findMany({
      where: { stageId: { in: stored.map((st) => st.id) } },
    });
    expect(stored.map((st) => evidence.filter((e) => e.stageId === st.id).map((e) => e.kind))).toEqual([
      ['stage.result'],
      ['stage.result'],
    ]);
    expect(stored.map((st) => st.summary)).toEqual([expect.any(String), envelope.summary]);
  });

  test('launch called twice (and concurrently) changes nothing: one run, one completion', async () => {
    const route = await s.seedRoute({ intent: 'twice launched report' });
    const { invocation } = await workflow.invocations.create({ intent: route.intent });
    const id = invocation.invocation_id;
    await Promise.all(Array.from({ length: 5 }, () => workflow.invocations.launch(id)));
    await artifactOf(id, { timeoutMs: 20_000, intervalMs: 50 });
    const again = await workflow.invocations.launch(id);
    expect(again.state).toBe('completed');
    expect(await s.database.prisma.workflowRun.count({ where: { invocationId: id } })).toBe(1);
    const completions = await s.database.prisma.auditEvent.count({
      where: { targetId: id, action: 'invocation.completed' },
    });
    expect(completions).toBe(1);
  });

  test('an unmatched invocation never launches: 409 launch_blocked with typed blockers', async () => {
    const { invocation } = await workflow.invocations.create({ intent: 'nothing here matches zzzz' });
    const error = await workflow.invocations.launch(invocation.invocation_id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).status).toBe(409);
    expect((error as ConflictError).code).toBe('launch_blocked');
    const after = await workflow.invocations.get(invocation.invocation_id);
    expect(after).toMatchObject({ state: 'blocked', attention: 'blocked', run_id: null });
    expect(after.blockers[0]).toMatchObject({
      category: 'classifier_template_configuration',
      code: 'no_contract_matched',
    });
  });
});

describe('governance', () => {
  test('human_approval_required holds the run until an owner approves; a key or a viewer cannot', async () => {
    const route = await s.seedRoute({ intent: 'approved report', approval: true });
    const launched = await invokeAndLaunch(route.intent);
    const held = await invocationWhen(launched.invocation_id, (inv) => inv.state === 'awaiting_approval');
    expect(held).toMatchObject({ attention: 'approval_required', run_id: null });
    expect(held.approval).toMatchObject({ required: true, decision: null });

    // A workspace key is not a participant.
    const byKey = await s.wf.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/approval',
      {
        params: { path: { projectId: s.project.id, invocationId: launched.invocation_id } },
        body: { decision: 'approve' },
      },
    );
    expect(byKey.response.status).toBe(403);

    const owner = ownerWorkflow();
    const approved = await owner.invocations.decideApproval(launched.invocation_id, {
      decision: 'approve',
      comment: 'go ahead',
    });
    expect(approved.approval).toMatchObject({ decision: 'approve', comment: 'go ahead' });
    const twice = await owner.invocations
      .decideApproval(launched.invocation_id, { decision: 'reject' })
      .catch((e: unknown) => e);
    expect(twice).toMatchObject({ status: 409 });
    await artifactOf(launched.invocation_id, { timeoutMs: 20_000 });
    const audit = await s.database.prisma.auditEvent.findMany({
      where: { targetId: launched.invocation_id, action: 'invocation.approved' },
    });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorKind: 'participant' });
  });

  test('a rejected run ends cancelled and never starts', async () => {
    const route = await s.seedRoute({ intent: 'rejected report', approval: true });
    const launched = await invokeAndLaunch(route.intent);
    await invocationWhen(launched.invocation_id, (inv) => inv.state === 'awaiting_approval');
    const rejected = await ownerWorkflow().invocations.decideApproval(launched.invocation_id, {
      decision: 'reject',
    });
    expect(rejected.state).toBe('cancelled');
    const error = await artifactOf(launched.invocation_id, { timeoutMs: 2_000 }).catch(
      (e: unknown) => e as Error,
    );
    expect(String(error)).toMatch(/cancelled/);
    expect(
      await s.database.prisma.workflowRun.count({ where: { invocationId: launched.invocation_id } }),
    ).toBe(0);
  });
});

const one = (capability: string) => [
  { key: 'produce', title: 'Produce it', required_capabilities: [capability] },
];

describe('artifacts', () => {
  test('a payload that does not match the pinned schema is rejected, kept as evidence and signalled', async () => {
    await s.addAgent(['bad-producer'], {
      handler: handlerModule(
        'bad',
        `module.exports = async function handle(ctx) {
           return { payload: { title: 42 }, summary: 'wrong shape' };
         };`,
      ),
    });
    const route = await s.seedRoute({ intent: 'bad payload report', stages: one('bad-producer') });
    const launched = await invokeAndLaunch(route.intent);
    const rejected = await invocationWhen(
      launched.invocation_id,
      (inv) => inv.attention === 'artifact_rejected',
    );
    expect(rejected.attention_reason).toMatch(/did not match/);
    expect(rejected.artifact).toBeNull();
    const evidence = await s.database.prisma.artifactRejection.findMany({
      where: { invocationId: launched.invocation_id },
    });
    expect(evidence.length).toBeGreaterThanOrEqual(1);
    expect(evidence[0]!.payload).toEqual({ title: 42 });
    const artifact = await s.wf.GET(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
      {
        params: { path: { projectId: s.project.id, invocationId: launched.invocation_id } },
      },
    );
    expect(artifact.response.status).toBe(404);
    expect((artifact.error as { code?: string }).code).toBe('artifact_not_found');

    // Publishing a bad payload directly is a 422 naming the evidence.
    const direct = await s.wf.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
      {
        params: { path: { projectId: s.project.id, invocationId: launched.invocation_id } },
        body: { payload: { title: 'x' } },
      },
    );
    expect(direct.response.status).toBe(422);
    expect(direct.error).toMatchObject({
      code: 'artifact_schema_mismatch',
      evidence_id: expect.stringMatching(/^rej_/),
    });
  });

  test('a run that ends without a published artifact is waiting_for_artifact, then completed on publication', async () => {
    await s.addAgent(['no-artifact'], {
      handler: handlerModule(
        'none',
        `module.exports = async () => ({ summary: 'done, nothing to publish' });`,
      ),
    });
    const route = await s.seedRoute({ intent: 'silent report', stages: one('no-artifact') });
    const launched = await invokeAndLaunch(route.intent);
    const waiting = await invocationWhen(
      launched.invocation_id,
      (inv) => inv.state === 'waiting_for_artifact',
    );
    expect(waiting.artifact).toBeNull();
    expect(waiting.stages[0]!.state).toBe('completed');
    const timeout = await artifactOf(launched.invocation_id, { timeoutMs: 600, intervalMs: 100 }).catch(
      (e: unknown) => e as Error,
    );
    expect(String(timeout)).toMatch(/last state waiting_for_artifact/);

    const payload = {
      title: 'Late',
      summary: 'Published by the integration',
      items: [{ name: 'a', score: 1 }],
    };
    const first = await workflow.invocations.publishArtifact(launched.invocation_id, {
      payload,
      summary: 'late publication',
    });
    expect(first.replayed).toBe(false);
    const again = await workflow.invocations.publishArtifact(launched.invocation_id, { payload });
    expect(again).toMatchObject({ replayed: true, envelope: { artifact_id: first.envelope.artifact_id } });
    const other = await s.wf.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
      {
        params: { path: { projectId: s.project.id, invocationId: launched.invocation_id } },
        body: { payload: { ...payload, title: 'Changed' } },
      },
    );
    expect(other.response.status).toBe(409);
    const done = await workflow.invocations.get(launched.invocation_id);
    expect(done).toMatchObject({ state: 'completed', artifact: { artifact_id: first.envelope.artifact_id } });
    expect(first.envelope.created_by.kind).toBe('api_key');
  });
});

describe('stage ownership', () => {
  test('an owner that stops heartbeating is marked stalled and its stage reassigned to another agent', async () => {
    const hang = handlerModule('hang', `module.exports = (ctx) => new Promise(() => {});`);
    const first = await s.addAgent(['stall-cap'], { handler: hang });
    const route = await s.seedRoute({ intent: 'stalling report', stages: one('stall-cap') });
    const launched = await invokeAndLaunch(route.intent);
    const claimed = await invocationWhen(launched.invocation_id, (inv) => inv.stages[0]?.state === 'claimed');
    expect(claimed.stages[0]!.owner_agent_id).toBe(first.id);
    await first.kill('SIGKILL');
    const second = await s.addAgent(['stall-cap']);
    await artifactOf(launched.invocation_id, { timeoutMs: 30_000 });
    // The agent publishes the artifact, then completes its stage: wait for the second call too.
    const invocation = await invocationWhen(
      launched.invocation_id,
      (inv) => inv.stages[0]?.state === 'completed',
    );
    expect(invocation.stages[0]).toMatchObject({
      owner_agent_id: second.id,
      attempts: 2,
      state: 'completed',
    });
    const stalled = await s.database.prisma.auditEvent.count({
      where: { targetId: invocation.stages[0]!.stage_id, action: 'stage.stalled' },
    });
    expect(stalled).toBe(1);

    // The stalled owner's hub handoff is cancelled at the hub; the new owner's is left to it.
    const stageId = invocation.stages[0]!.stage_id;
    const handoffs = await eventually(
      async () => {
        const res = await s.hub.GET('/api/v1/workspaces/{workspace}/handoffs', {
          params: {
            path: { workspace: s.workspace.id },
            query: { reference_kind: 'workflow_stage', reference_id: stageId },
          },
        });
        const all = res.data?.data ?? [];
        return all.find((h) => h.assignee_agent_id === first.id)?.status === 'cancelled' && all;
      },
      30_000,
      'the stalled owner’s handoff to be cancelled at the hub',
      { intervalMs: 150 },
    );
    expect(handoffs.find((h) => h.assignee_agent_id === first.id)?.status).toBe('cancelled');
    expect(handoffs.find((h) => h.assignee_agent_id === second.id)?.status).not.toBe('cancelled');
    const closure = await s.database.prisma.handoffClosure.findFirstOrThrow({ where: { stageId } });
    expect(closure).toMatchObject({ reason: 'stage_released', outcome: 'cancelled' });

    // The stalled owner is told the stage is gone; a stranger may not touch it.
    const former = createWorkflowClient({ baseUrl: s.workflowUrl, token: first.token });
    const gone = await former.POST('/api/v1/agents/me/workflow-stages/{stageId}/heartbeat', {
      params: { path: { stageId: invocation.stages[0]!.stage_id } },
      body: {},
    });
    expect(gone.response.status).toBe(409);
    expect((gone.error as { code?: string }).code).toBe('stage_reassigned');
  });

  test('no agent with the capabilities: launch proceeds but the run is blocked with a recommended action', async () => {
    const route = await s.seedRoute({ intent: 'orphan report', stages: one('nobody-has-this') });
    const launched = await invokeAndLaunch(route.intent);
    // Launch is accepted waiting for an owner (its blockers shown at once); the run then starts and waits.
    // No owner, and the spawn-policy reasons the hub will not spawn one (its policy is off): all wait.
    expect(launched.blockers[0]).toMatchObject({ code: 'no_stage_owner', effect: 'waits_for_owner' });
    expect(launched.blockers.slice(1).map((b) => [b.category, b.effect])).toEqual(
      launched.blockers.slice(1).map(() => ['spawn_policy', 'waits_for_owner']),
    );
    expect(launched.blockers.map((b) => b.code)).toContain('spawn_policy_off');
    const blocked = await invocationWhen(
      launched.invocation_id,
      (inv) => inv.state === 'running' && inv.attention === 'blocked',
    );
    expect(blocked).toMatchObject({ state: 'running', attention: 'blocked' });
    expect(blocked.blockers[0]).toMatchObject({
      category: 'roster_ownership',
      code: 'no_stage_owner',
      stage_key: 'produce',
    });
    expect(blocked.blockers[0]!.recommended_action).toMatch(/Start an agent/);
    // An agent with the capability appears: the sweeper assigns the stage and the run completes.
    await s.addAgent(['nobody-has-this']);
    const { invocation } = await artifactOf(launched.invocation_id, { timeoutMs: 20_000 });
    expect(invocation).toMatchObject({ state: 'completed', attention: 'none', blockers: [] });
  });

  test('agent routes refuse other agents, keys and unknown stages', async () => {
    const hang = handlerModule('hang2', `module.exports = (ctx) => new Promise(() => {});`);
    const owner = await s.addAgent(['own-cap'], { handler: hang });
    const stranger = await s.addAgent(['other-cap']);
    const route = await s.seedRoute({ intent: 'owned report', stages: one('own-cap') });
    const launched = await invokeAndLaunch(route.intent);
    const claimed = await invocationWhen(launched.invocation_id, (inv) => inv.stages[0]?.state === 'claimed');
    const stageId = claimed.stages[0]!.stage_id;
    const asStranger = createWorkflowClient({ baseUrl: s.workflowUrl, token: stranger.token });
    const claim = await asStranger.POST('/api/v1/agents/me/workflow-stages/{stageId}/claim', {
      params: { path: { stageId } },
    });
    expect(claim.response.status).toBe(403);
    expect((claim.error as { code?: string }).code).toBe('stage_not_owned');
    const publish = await asStranger.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
      {
        params: { path: { projectId: s.project.id, invocationId: launched.invocation_id } },
        body: { payload: {} },
      },
    );
    expect(publish.response.status).toBe(403);
    const byKey = await fetch(`${s.workflowUrl}/api/v1/agents/me/workflow-stages/${stageId}/claim`, {
      method: 'POST',
      headers: { 'x-api-key': s.apiKey },
    });
    expect(byKey.status).toBe(403);
    const unknown = await asStranger.POST('/api/v1/agents/me/workflow-stages/{stageId}/claim', {
      params: { path: { stageId: 'stg_unknown' } },
    });
    expect(unknown.response.status).toBe(404);
    const anonymous = await fetch(`${s.workflowUrl}/api/v1/agents/me/workflow-stages`);
    expect(anonymous.status).toBe(401);
    // Claim-next is the agents' own: a key is refused, another agent claims nothing of the owner's.
    const claimByKey = await fetch(`${s.workflowUrl}/api/v1/agents/me/workflow-stages/claims`, {
      method: 'POST',
      headers: { 'x-api-key': s.apiKey },
    });
    expect(claimByKey.status).toBe(403);
    expect(((await claimByKey.json()) as { code?: string }).code).toBe('actor_not_allowed');
    const strangerNext = await asStranger.POST('/api/v1/agents/me/workflow-stages/claims', {
      params: { query: { wait: 0, max: 20 } },
    });
    expect(strangerNext.response.status).toBe(200);
    expect(strangerNext.data?.data).toEqual([]);
    const tooMany = await asStranger.POST('/api/v1/agents/me/workflow-stages/claims', {
      params: { query: { max: 21 } },
    });
    expect(tooMany.response.status).toBe(400);

    // The owner reports a blocker: the invocation's attention says so; clearing it resumes.
    const asOwner = createWorkflowClient({ baseUrl: s.workflowUrl, token: owner.token });
    const blocked = await asOwner.POST('/api/v1/agents/me/workflow-stages/{stageId}/blocker', {
      params: { path: { stageId } },
      body: {
        reason: 'waiting for credentials token=svc_abcdefghijkl_secretsecretsecretsecretsecretsecretsec',
      },
    });
    expect(blocked.response.status).toBe(200);
    const seen = await workflow.invocations.get(launched.invocation_id);
    expect(seen.attention).toBe('blocked');
    expect(seen.attention_reason).toMatch(/waiting for credentials/);
    expect(JSON.stringify(seen)).not.toContain('secretsecret');
    const cleared = await asOwner.DELETE('/api/v1/agents/me/workflow-stages/{stageId}/blocker', {
      params: { path: { stageId } },
    });
    expect(cleared.response.status).toBe(200);
    const resumed = await workflow.invocations.get(launched.invocation_id);
    expect(resumed.attention).toBe('none');

    // Evidence sent with a publication by anyone but the final stage's owner is refused, and nothing is stored.
    const evidence = [
      {
        kind: 'stage.result',
        content: { note: 'used token=svc_abcdefghijkl_secretsecretsecretsecretsecretsecretsec' },
      },
      { kind: 'notes', content: { sources: 2 } },
    ];
    const keyEvidence = await s.wf.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
      {
        params: { path: { projectId: s.project.id, invocationId: launched.invocation_id } },
        body: { payload: { title: 'x', summary: 'y', items: [] }, evidence },
      },
    );
    expect(keyEvidence.response.status).toBe(403);
    expect((keyEvidence.error as { code?: string }).code).toBe('stage_not_owned');
    expect(await workflow.invocations.get(launched.invocation_id)).toMatchObject({ artifact: null });
    // The owner completes with its evidence: stored with the completion, redacted, in order; completing
    // again stores none again.
    for (let i = 0; i < 2; i += 1) {
      const completed = await asOwner.POST('/api/v1/agents/me/workflow-stages/{stageId}/complete', {
        params: { path: { stageId } },
        body: { summary: 'done by hand', evidence },
      });
      expect(completed.response.status).toBe(200);
      expect(completed.data?.data.state).toBe('completed');
    }
    const stored = await s.database.prisma.stageEvidence.findMany({
      where: { stageId },
      orderBy: { createdAt: 'asc' },
    });
    expect(stored.map((e) => [e.kind, e.agentId])).toEqual([
      ['stage.result', owner.id],
      ['notes', owner.id],
    ]);
    expect(JSON.stringify(stored)).not.toContain('secretsecret');
    await owner.kill('SIGKILL');
  });
});
