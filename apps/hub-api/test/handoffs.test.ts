import { unwrap } from '@svc/contracts';
import { createKey, startTestHub } from './support/harness';
import type { SeededAgent, SeededMember, TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

async function createHandoff(
  member: SeededMember,
  body: {
    title: string;
    description?: string;
    project_id?: string;
    assignee_agent_id?: string;
    reference?: { kind: string; id: string; data?: Record<string, unknown> };
  },
) {
  return unwrap(
    await t.client({ token: member.token }).POST('/api/v1/workspaces/{workspace}/handoffs', {
      params: { path: { workspace: member.workspace.slug } },
      body,
    }),
  );
}

const path = (handoffId: string) => ({ params: { path: { handoffId } } });

async function auditActions(targetId: string) {
  const rows = await t.database.prisma.auditEvent.findMany({
    where: { targetId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((r) => r.action);
}

describe('creating and reading handoffs', () => {
  test('when a member creates a handoff, then it is open, listed, readable by id with its evidence, and audited', async () => {
    const member = await t.seedMember('member');
    const project = await t.seedProject(member.workspace.id);
    const agent = await t.seedAgent(member.workspace.id);
    const created = await createHandoff(member, {
      title: '  Review the release notes ',
      description: 'Check the changelog.',
      project_id: project.id,
      assignee_agent_id: agent.id,
      reference: { kind: 'ticket', id: 'OPS-12', data: { priority: 'high' } },
    });
    expect(created).toMatchObject({
      title: 'Review the release notes',
      description: 'Check the changelog.',
      status: 'open',
      workspace_id: member.workspace.id,
      project_id: project.id,
      assignee_agent_id: agent.id,
      created_by: { kind: 'participant', id: member.participantId },
      reference: { kind: 'ticket', id: 'OPS-12', data: { priority: 'high' } },
      blocker_reason: null,
      accepted_at: null,
    });
    const api = t.client({ token: member.token });
    const list = unwrap(
      await api.GET('/api/v1/workspaces/{workspace}/handoffs', {
        params: { path: { workspace: member.workspace.id } },
      }),
    );
    expect(list.map((h) => h.id)).toEqual([created.id]);
    const one = unwrap(await api.GET('/api/v1/handoffs/{handoffId}', path(created.id)));
    expect(one).toMatchObject({ id: created.id, evidence: [] });
    expect(await auditActions(created.id)).toEqual(['handoff.created']);
  });

  test('when an automation key creates a handoff, then it works and the key is its creator', async () => {
    const admin = await t.seedMember('admin');
    const key = await createKey(t, admin, { preset: 'automation' });
    const res = await t.client({ apiKey: key.key }).POST('/api/v1/workspaces/{workspace}/handoffs', {
      params: { path: { workspace: admin.workspace.slug } },
      body: { title: 'From CI' },
    });
    expect(res.response.status).toBe(201);
    expect(res.data?.data).toMatchObject({
      status: 'open',
      assignee_agent_id: null,
      reference: null,
      created_by: { kind: 'api_key', id: key.id },
    });
  });

  test('when a viewer or a read-only key creates a handoff, then 403', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const params = { path: { workspace: owner.workspace.slug } };
    const byViewer = await t
      .client({ token: viewer.token })
      .POST('/api/v1/workspaces/{workspace}/handoffs', { params, body: { title: 'x' } });
    expect(byViewer.error?.code).toBe('role_forbidden');
    const byKey = await t
      .client({ apiKey: readOnly.key })
      .POST('/api/v1/workspaces/{workspace}/handoffs', { params, body: { title: 'x' } });
    expect(byKey.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['handoffs:write'] });
  });

  test('when the assignee is evicted, of another workspace or missing, or the project is foreign, then it is refused', async () => {
    const member = await t.seedMember('member');
    const other = await t.seedMember('owner');
    const evicted = await t.seedAgent(member.workspace.id, { status: 'evicted', evictedAt: new Date() });
    const foreignAgent = await t.seedAgent(other.workspace.id);
    const foreignProject = await t.seedProject(other.workspace.id);
    const api = t.client({ token: member.token });
    const params = { path: { workspace: member.workspace.slug } };
    const post = (body: { title: string; assignee_agent_id?: string; project_id?: string }) =>
      api.POST('/api/v1/workspaces/{workspace}/handoffs', { params, body });

    const toEvicted = await post({ title: 'x', assignee_agent_id: evicted.id });
    expect({ status: toEvicted.response.status, code: toEvicted.error?.code }).toEqual({
      status: 409,
      code: 'agent_evicted',
    });
    const toForeign = await post({ title: 'x', assignee_agent_id: foreignAgent.id });
    expect({ status: toForeign.response.status, code: toForeign.error?.code }).toEqual({
      status: 400,
      code: 'assignee_not_found',
    });
    const toMissing = await post({ title: 'x', assignee_agent_id: 'agt_missing' });
    expect(toMissing.error?.code).toBe('assignee_not_found');
    const inForeignProject = await post({ title: 'x', project_id: foreignProject.id });
    expect({ status: inForeignProject.response.status, code: inForeignProject.error?.code }).toEqual({
      status: 400,
      code: 'project_not_found',
    });
    const blankTitle = await post({ title: '   ' });
    expect(blankTitle.error?.errors?.[0]?.location).toBe('body/title');
    expect(await t.database.prisma.handoff.count({ where: { workspaceId: member.workspace.id } })).toBe(0);
  });

  test('when handoffs are listed with filters and pages, then only the matching ones come back, oldest first', async () => {
    const member = await t.seedMember('member');
    const project = await t.seedProject(member.workspace.id);
    const a = await t.seedAgent(member.workspace.id);
    const b = await t.seedAgent(member.workspace.id);
    const h1 = await createHandoff(member, { title: 'one', assignee_agent_id: a.id, project_id: project.id });
    const h2 = await createHandoff(member, {
      title: 'two',
      assignee_agent_id: b.id,
      reference: { kind: 'ticket', id: 'T-2' },
    });
    const h3 = await createHandoff(member, { title: 'three', reference: { kind: 'ticket', id: 'T-3' } });
    unwrap(
      await t.client({ token: a.token }).POST('/api/v1/agents/me/handoffs/{handoffId}/accept', path(h1.id)),
    );
    const api = t.client({ token: member.token });
    const list = async (query: Record<string, string | number>) =>
      unwrap(
        await api.GET('/api/v1/workspaces/{workspace}/handoffs', {
          params: { path: { workspace: member.workspace.slug }, query },
        }),
      ).map((h) => h.id);

    expect(await list({})).toEqual([h1.id, h2.id, h3.id]);
    expect(await list({ status: 'accepted' })).toEqual([h1.id]);
    expect(await list({ status: 'open' })).toEqual([h2.id, h3.id]);
    expect(await list({ assignee_agent_id: b.id })).toEqual([h2.id]);
    expect(await list({ project_id: project.id })).toEqual([h1.id]);
    expect(await list({ reference_kind: 'ticket' })).toEqual([h2.id, h3.id]);
    expect(await list({ reference_kind: 'ticket', reference_id: 'T-3' })).toEqual([h3.id]);
    expect(await list({ limit: 2 })).toEqual([h1.id, h2.id]);
    expect(await list({ limit: 2, after: h2.id })).toEqual([h3.id]);

    const withoutKind = await api.GET('/api/v1/workspaces/{workspace}/handoffs', {
      params: { path: { workspace: member.workspace.slug }, query: { reference_id: 'T-3' } },
    });
    expect({ status: withoutKind.response.status, code: withoutKind.error?.code }).toEqual({
      status: 400,
      code: 'reference_kind_required',
    });
    const badStatus = await api.GET('/api/v1/workspaces/{workspace}/handoffs', {
      params: {
        path: { workspace: member.workspace.slug },
        query: { status: 'done' as unknown as 'open' },
      },
    });
    expect(badStatus.error?.errors?.[0]?.location).toBe('query/status');
  });

  test('when a read-only key lists and reads handoffs, then it may: handoffs:read is an observer scope', async () => {
    const owner = await t.seedMember('owner');
    const handoff = await createHandoff(owner, { title: 'observe me' });
    const key = await createKey(t, owner, { preset: 'read-only' });
    const api = t.client({ apiKey: key.key });
    const one = unwrap(await api.GET('/api/v1/handoffs/{handoffId}', path(handoff.id)));
    expect(one.title).toBe('observe me');
  });

  test("when someone reads another workspace's handoff by id, then it is not found", async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    const handoff = await createHandoff(a, { title: 'hidden' });
    const byParticipant = await t
      .client({ token: b.token })
      .GET('/api/v1/handoffs/{handoffId}', path(handoff.id));
    expect({ status: byParticipant.response.status, code: byParticipant.error?.code }).toEqual({
      status: 404,
      code: 'handoff_not_found',
    });
    const keyB = await createKey(t, b, { preset: 'read-only' });
    const byKey = await t.client({ apiKey: keyB.key }).GET('/api/v1/handoffs/{handoffId}', path(handoff.id));
    expect(byKey.response.status).toBe(404);
    const agentB = await t.seedAgent(b.workspace.id);
    const byAgent = await t
      .client({ token: agentB.token })
      .GET('/api/v1/handoffs/{handoffId}', path(handoff.id));
    expect(byAgent.response.status).toBe(404);
    const cancel = await t
      .client({ token: b.token })
      .POST('/api/v1/handoffs/{handoffId}/cancel', path(handoff.id));
    expect(cancel.response.status).toBe(404);
  });

  test("when an agent reads handoffs, then it sees its own and open unassigned ones, not a peer's", async () => {
    const member = await t.seedMember('member');
    const me = await t.seedAgent(member.workspace.id);
    const peer = await t.seedAgent(member.workspace.id);
    const mine = await createHandoff(member, { title: 'mine', assignee_agent_id: me.id });
    const theirs = await createHandoff(member, { title: 'theirs', assignee_agent_id: peer.id });
    const pool = await createHandoff(member, { title: 'anyone' });
    const api = t.client({ token: me.token });
    expect((await api.GET('/api/v1/handoffs/{handoffId}', path(mine.id))).response.status).toBe(200);
    expect((await api.GET('/api/v1/handoffs/{handoffId}', path(pool.id))).response.status).toBe(200);
    expect((await api.GET('/api/v1/handoffs/{handoffId}', path(theirs.id))).response.status).toBe(404);
  });
});

describe('the handoff lifecycle', () => {
  let member: SeededMember;
  let agent: SeededAgent;
  beforeAll(async () => {
    member = await t.seedMember('member');
    agent = await t.seedAgent(member.workspace.id);
  });

  const act = (token: string) => {
    const api = t.client({ token });
    return {
      accept: (id: string) => api.POST('/api/v1/agents/me/handoffs/{handoffId}/accept', path(id)),
      claim: (id: string) => api.POST('/api/v1/agents/me/handoffs/{handoffId}/claim', path(id)),
      block: (id: string, reason: string) =>
        api.POST('/api/v1/agents/me/handoffs/{handoffId}/block', { ...path(id), body: { reason } }),
      unblock: (id: string) => api.POST('/api/v1/agents/me/handoffs/{handoffId}/unblock', path(id)),
      evidence: (id: string, content: unknown) =>
        api.POST('/api/v1/agents/me/handoffs/{handoffId}/evidence', {
          ...path(id),
          body: { kind: 'log', content },
        }),
      complete: (id: string, summary?: string) =>
        api.POST('/api/v1/agents/me/handoffs/{handoffId}/complete', {
          ...path(id),
          body: summary === undefined ? {} : { summary },
        }),
    };
  };

  test('when the assignee accepts, claims, blocks, unblocks, submits evidence and completes, then every step shows and is audited', async () => {
    const handoff = await createHandoff(member, { title: 'full cycle', assignee_agent_id: agent.id });
    const a = act(agent.token);
    expect(unwrap(await a.accept(handoff.id))).toMatchObject({
      status: 'accepted',
      accepted_at: expect.any(String),
    });
    expect(unwrap(await a.claim(handoff.id))).toMatchObject({
      status: 'claimed',
      claimed_at: expect.any(String),
    });
    const blocked = unwrap(await a.block(handoff.id, '  waiting for the staging database  '));
    expect(blocked).toMatchObject({
      status: 'blocked',
      blocker_reason: 'waiting for the staging database',
      blocked_at: expect.any(String),
    });
    const unblocked = unwrap(await a.unblock(handoff.id));
    expect(unblocked).toMatchObject({ status: 'claimed', blocker_reason: null });
    const evidence = await a.evidence(handoff.id, { tests: 42, passed: true });
    expect(evidence.response.status).toBe(201);
    expect(evidence.data?.data).toMatchObject({
      kind: 'log',
      content: { tests: 42, passed: true },
      agent_id: agent.id,
    });
    const completed = unwrap(await a.complete(handoff.id, 'All green.'));
    expect(completed).toMatchObject({ status: 'completed', completed_at: expect.any(String) });

    const detail = unwrap(
      await t.client({ token: member.token }).GET('/api/v1/handoffs/{handoffId}', path(handoff.id)),
    );
    expect(detail.evidence.map((e) => [e.kind, e.content])).toEqual([
      ['log', { tests: 42, passed: true }],
      ['completion_summary', { summary: 'All green.' }],
    ]);
    expect(await auditActions(handoff.id)).toEqual([
      'handoff.created',
      'handoff.accepted',
      'handoff.claimed',
      'handoff.blocked',
      'handoff.unblocked',
      'handoff.evidence_submitted',
      'handoff.completed',
    ]);
    const blockedEvent = await t.database.prisma.auditEvent.findFirstOrThrow({
      where: { targetId: handoff.id, action: 'handoff.blocked' },
    });
    expect(blockedEvent).toMatchObject({
      actorKind: 'agent',
      actorId: agent.id,
      workspaceId: member.workspace.id,
    });
    expect(blockedEvent.data).toMatchObject({
      from: 'claimed',
      to: 'blocked',
      reason: 'waiting for the staging database',
    });
  });

  test('when an open handoff is claimed straight away and blocked from accepted, then both paths are allowed', async () => {
    const direct = await createHandoff(member, { title: 'direct', assignee_agent_id: agent.id });
    const a = act(agent.token);
    expect(unwrap(await a.claim(direct.id)).status).toBe('claimed');

    const early = await createHandoff(member, { title: 'early block', assignee_agent_id: agent.id });
    unwrap(await a.accept(early.id));
    expect(unwrap(await a.block(early.id, 'no access')).status).toBe('blocked');
    const unblocked = unwrap(await a.unblock(early.id));
    expect(unblocked).toMatchObject({ status: 'claimed', claimed_at: expect.any(String) });
  });

  test('when a transition does not fit the current status, then 409 handoff_invalid_transition names the status', async () => {
    const handoff = await createHandoff(member, { title: 'strict', assignee_agent_id: agent.id });
    const a = act(agent.token);
    const expectInvalid = async (res: Promise<{ response: Response; error?: unknown }>, status: string) => {
      const out = await res;
      expect(out.response.status).toBe(409);
      expect(out.error).toMatchObject({ code: 'handoff_invalid_transition', current_status: status });
      expect((out.error as { detail: string }).detail).toContain(status);
    };
    await expectInvalid(a.complete(handoff.id), 'open');
    await expectInvalid(a.unblock(handoff.id), 'open');
    await expectInvalid(a.block(handoff.id, 'x'), 'open');
    unwrap(await a.accept(handoff.id));
    await expectInvalid(a.accept(handoff.id), 'accepted');
    await expectInvalid(a.complete(handoff.id), 'accepted');
    unwrap(await a.claim(handoff.id));
    await expectInvalid(a.claim(handoff.id), 'claimed');
    unwrap(await a.block(handoff.id, 'stuck'));
    await expectInvalid(a.complete(handoff.id), 'blocked');
    await expectInvalid(a.block(handoff.id, 'again'), 'blocked');
    unwrap(await a.unblock(handoff.id));
    unwrap(await a.complete(handoff.id));
    await expectInvalid(a.claim(handoff.id), 'completed');
    const cancel = await t
      .client({ token: member.token })
      .POST('/api/v1/handoffs/{handoffId}/cancel', path(handoff.id));
    expect(cancel.error).toMatchObject({ code: 'handoff_invalid_transition', current_status: 'completed' });
    const lateEvidence = await a.evidence(handoff.id, 'late');
    expect(lateEvidence.error).toMatchObject({
      code: 'handoff_not_in_progress',
      current_status: 'completed',
    });
    const earlyEvidence = await a.evidence(
      (await createHandoff(member, { title: 'fresh', assignee_agent_id: agent.id })).id,
      'early',
    );
    expect(earlyEvidence.error).toMatchObject({ code: 'handoff_not_in_progress', current_status: 'open' });
  });

  test('when another agent acts on an assigned handoff, then 403 handoff_not_assigned and nothing changes', async () => {
    const handoff = await createHandoff(member, { title: 'not yours', assignee_agent_id: agent.id });
    const other = await t.seedAgent(member.workspace.id);
    const o = act(other.token);
    for (const res of [
      o.accept(handoff.id),
      o.claim(handoff.id),
      o.block(handoff.id, 'x'),
      o.unblock(handoff.id),
      o.evidence(handoff.id, 'x'),
      o.complete(handoff.id),
    ]) {
      const out = await res;
      expect({
        status: out.response.status,
        code: (out.error as { code?: string } | undefined)?.code,
      }).toEqual({
        status: 403,
        code: 'handoff_not_assigned',
      });
    }
    const row = await t.database.prisma.handoff.findUniqueOrThrow({ where: { id: handoff.id } });
    expect({ status: row.status, assignee: row.assigneeAgentId }).toEqual({
      status: 'open',
      assignee: agent.id,
    });
    const foreign = await t.seedAgent((await t.seedMember('owner')).workspace.id);
    const byForeign = await act(foreign.token).accept(handoff.id);
    expect(byForeign.response.status).toBe(404);
  });

  test('when an open unassigned handoff is claimed, then the claimer becomes its assignee and others are refused', async () => {
    const handoff = await createHandoff(member, { title: 'pool' });
    const first = await t.seedAgent(member.workspace.id);
    const second = await t.seedAgent(member.workspace.id);
    const accept = await act(first.token).accept(handoff.id);
    expect(accept.error).toMatchObject({ code: 'handoff_not_assigned' });
    const claimed = unwrap(await act(first.token).claim(handoff.id));
    expect(claimed).toMatchObject({ status: 'claimed', assignee_agent_id: first.id });
    const late = await act(second.token).claim(handoff.id);
    expect(late.error).toMatchObject({ code: 'handoff_not_assigned' });
    const event = await t.database.prisma.auditEvent.findFirstOrThrow({
      where: { targetId: handoff.id, action: 'handoff.claimed' },
    });
    expect(event.data).toMatchObject({ from: 'open', to: 'claimed', assigned_to: first.id });
  });

  test('when two agents claim the same open unassigned handoff at once, then exactly one wins', async () => {
    const handoff = await createHandoff(member, { title: 'race' });
    const racers = await Promise.all([1, 2, 3, 4].map(() => t.seedAgent(member.workspace.id)));
    const results = await Promise.all(racers.map((r) => act(r.token).claim(handoff.id)));
    const statuses = results.map((r) => r.response.status).sort();
    expect(statuses).toEqual([200, 403, 403, 403]);
    const winner = racers[results.findIndex((r) => r.response.status === 200)] as SeededAgent;
    const row = await t.database.prisma.handoff.findUniqueOrThrow({ where: { id: handoff.id } });
    expect(row.assigneeAgentId).toBe(winner.id);
    expect(await auditActions(handoff.id)).toEqual(['handoff.created', 'handoff.claimed']);
  });

  test('when a member or an automation key cancels an active handoff, then it is cancelled and the agent can no longer act', async () => {
    const handoff = await createHandoff(member, { title: 'cancel me', assignee_agent_id: agent.id });
    unwrap(await act(agent.token).claim(handoff.id));
    unwrap(await act(agent.token).block(handoff.id, 'waiting'));
    const cancelled = unwrap(
      await t.client({ token: member.token }).POST('/api/v1/handoffs/{handoffId}/cancel', path(handoff.id)),
    );
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      cancelled_at: expect.any(String),
      blocker_reason: null,
    });
    const again = await act(agent.token).unblock(handoff.id);
    expect(again.error).toMatchObject({ code: 'handoff_invalid_transition', current_status: 'cancelled' });
    expect(await auditActions(handoff.id)).toContain('handoff.cancelled');

    const owner = await t.seedMember('owner', member.workspace);
    const key = await createKey(t, owner, { preset: 'automation' });
    const second = await createHandoff(member, { title: 'cancel by key' });
    const byKey = await t
      .client({ apiKey: key.key })
      .POST('/api/v1/handoffs/{handoffId}/cancel', path(second.id));
    expect(byKey.data?.data.status).toBe('cancelled');
  });

  test('when a viewer cancels, then 403 role_forbidden', async () => {
    const viewer = await t.seedMember('viewer', member.workspace);
    const handoff = await createHandoff(member, { title: 'keep' });
    const res = await t
      .client({ token: viewer.token })
      .POST('/api/v1/handoffs/{handoffId}/cancel', path(handoff.id));
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 403,
      code: 'role_forbidden',
    });
  });
});

describe('GET /api/v1/agents/me/assignments', () => {
  test('when an agent asks for its assignments, then it gets its unfinished handoffs, oldest first, and nobody else’s', async () => {
    const member = await t.seedMember('member');
    const agent = await t.seedAgent(member.workspace.id);
    const peer = await t.seedAgent(member.workspace.id);
    const first = await createHandoff(member, { title: 'first', assignee_agent_id: agent.id });
    const done = await createHandoff(member, { title: 'done', assignee_agent_id: agent.id });
    const dropped = await createHandoff(member, { title: 'dropped', assignee_agent_id: agent.id });
    await createHandoff(member, { title: 'peer', assignee_agent_id: peer.id });
    await createHandoff(member, { title: 'pool' });
    const last = await createHandoff(member, { title: 'last', assignee_agent_id: agent.id });
    const api = t.client({ token: agent.token });
    unwrap(await api.POST('/api/v1/agents/me/handoffs/{handoffId}/claim', path(done.id)));
    unwrap(await api.POST('/api/v1/agents/me/handoffs/{handoffId}/complete', { ...path(done.id), body: {} }));
    unwrap(
      await t.client({ token: member.token }).POST('/api/v1/handoffs/{handoffId}/cancel', path(dropped.id)),
    );
    unwrap(await api.POST('/api/v1/agents/me/handoffs/{handoffId}/accept', path(last.id)));

    const assignments = unwrap(await api.GET('/api/v1/agents/me/assignments'));
    expect(assignments.map((h) => h.id)).toEqual([first.id, last.id]);
  });

  test('when a participant or an API key asks for agent assignments, then 403: this is for agent tokens', async () => {
    const owner = await t.seedMember('owner');
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    const byKey = await t.client({ apiKey: key.key }).GET('/api/v1/agents/me/assignments');
    expect(byKey.error?.code).toBe('actor_not_allowed');
    const byParticipant = await t.client({ token: owner.token }).GET('/api/v1/agents/me/assignments');
    expect(byParticipant.error?.code).toBe('actor_not_allowed');
  });

  test('when an evicted agent calls with its old token, then 401', async () => {
    const member = await t.seedMember('member');
    const agent = await t.seedAgent(member.workspace.id);
    await t.database.prisma.agent.update({
      where: { id: agent.id },
      data: { status: 'evicted', evictedAt: new Date() },
    });
    const res = await t.client({ token: agent.token }).GET('/api/v1/agents/me/assignments');
    expect(res.response.status).toBe(401);
  });
});
