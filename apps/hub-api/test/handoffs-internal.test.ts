import { unwrap } from '@svc/contracts';
import { poolCounts } from '@svc/db-kit';
import { newId } from '@svc/service-kit';
import { createKey, SERVICE_TOKEN, startTestHub } from './support/harness';
import type { SeededAgent, SeededMember, TestHub } from './support/harness';

/** POST /internal/v1/handoffs: the workflow engine's stage handoffs, created once per reference and owner. */
let t: TestHub;
let member: SeededMember;
let owner: SeededAgent;
let projectId: string;

beforeAll(async () => {
  t = await startTestHub();
  member = await t.seedMember('owner');
  owner = await t.seedAgent(member.workspace.id);
  projectId = (
    await t.database.prisma.project.create({
      data: { id: newId('prj'), workspaceId: member.workspace.id, code: 'WF', name: 'Workflow' },
    })
  ).id;
}, 30_000);
afterAll(() => t.close());

function stageRequest(overrides: Record<string, unknown> = {}) {
  return {
    workspace_id: member.workspace.id,
    project_id: projectId,
    assignee_agent_id: owner.id,
    title: 'Stage: review',
    description: 'Review the generated plan.',
    reference: {
      kind: 'workflow_stage',
      id: `inv_${newId('x').slice(2)}:review`,
      data: { invocation_id: 'inv_1', stage: 'review' },
    },
    ...overrides,
  };
}

describe('POST /internal/v1/handoffs', () => {
  test('when the workflow engine creates a stage handoff twice, then the first call creates (201) and the second returns the same one (200)', async () => {
    const body = stageRequest();
    const first = await t.internal().POST('/internal/v1/handoffs', { body });
    expect(first.response.status).toBe(201);
    expect(first.data?.data).toMatchObject({
      status: 'open',
      workspace_id: member.workspace.id,
      project_id: projectId,
      assignee_agent_id: owner.id,
      created_by: { kind: 'service', id: 'internal' },
      reference: body.reference,
    });
    const second = await t
      .internal()
      .POST('/internal/v1/handoffs', { body: { ...body, title: 'changed title' } });
    expect(second.response.status).toBe(200);
    expect(second.data?.data.id).toBe(first.data?.data.id);
    expect(second.data?.data.title).toBe('Stage: review');
    const events = await t.database.prisma.auditEvent.findMany({
      where: { targetId: first.data?.data.id, action: 'handoff.created' },
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actorKind: 'service', workspaceId: member.workspace.id });

    // The stage owner sees it as an assignment.
    const assignments = unwrap(await t.client({ token: owner.token }).GET('/api/v1/agents/me/assignments'));
    expect(assignments.map((h) => h.id)).toContain(first.data?.data.id);
  });

  test('when a stage handoff is created or asked for again, then one transaction of four statements answers it (decision 97)', async () => {
    const body = stageRequest();
    const counted = async (call: () => Promise<{ response: Response }>) => {
      const before = { ...poolCounts(t.database.pool)! };
      const { response } = await call();
      const after = poolCounts(t.database.pool)!;
      return {
        status: response.status,
        statements: after.statements - before.statements,
        transactions: after.transactions - before.transactions,
      };
    };
    // BEGIN, the advisory lock, the checks with the insert and its audit event, COMMIT.
    expect(await counted(() => t.internal().POST('/internal/v1/handoffs', { body }))).toEqual({
      status: 201,
      statements: 4,
      transactions: 1,
    });
    expect(await counted(() => t.internal().POST('/internal/v1/handoffs', { body }))).toEqual({
      status: 200,
      statements: 4,
      transactions: 1,
    });
    const created = await t.database.prisma.handoff.findFirstOrThrow({
      where: { referenceKind: 'workflow_stage', referenceId: body.reference.id },
    });
    expect(created).toMatchObject({
      title: 'Stage: review',
      description: 'Review the generated plan.',
      status: 'open',
      createdByKind: 'service',
      createdById: 'internal',
      referenceData: body.reference.data,
    });
    const events = await t.database.prisma.auditEvent.findMany({
      where: { targetId: created.id, action: 'handoff.created' },
    });
    expect(events).toEqual([
      expect.objectContaining({
        workspaceId: member.workspace.id,
        actorKind: 'service',
        actorId: 'internal',
        targetType: 'handoff',
        requestId: expect.any(String),
        data: {
          project_id: projectId,
          assignee_agent_id: owner.id,
          reference_kind: 'workflow_stage',
          reference_id: body.reference.id,
        },
      }),
    ]);
  });

  test('when the handoff has moved on, then a repeated call returns it as it is now', async () => {
    const body = stageRequest();
    const created = unwrap(await t.internal().POST('/internal/v1/handoffs', { body }));
    unwrap(
      await t.client({ token: owner.token }).POST('/api/v1/agents/me/handoffs/{handoffId}/claim', {
        params: { path: { handoffId: created.id } },
      }),
    );
    const again = await t.internal().POST('/internal/v1/handoffs', { body });
    expect(again.response.status).toBe(200);
    expect(again.data?.data).toMatchObject({ id: created.id, status: 'claimed' });
  });

  test('when the same stage is handed to another owner, or another stage to the same owner, then each gets its own handoff', async () => {
    const body = stageRequest();
    const other = await t.seedAgent(member.workspace.id);
    const a = unwrap(await t.internal().POST('/internal/v1/handoffs', { body }));
    const b = unwrap(
      await t.internal().POST('/internal/v1/handoffs', { body: { ...body, assignee_agent_id: other.id } }),
    );
    const c = unwrap(
      await t.internal().POST('/internal/v1/handoffs', {
        body: { ...body, reference: { ...body.reference, id: `${body.reference.id}-2` } },
      }),
    );
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
  });

  test('when identical calls arrive at the same time, then exactly one handoff exists', async () => {
    const body = stageRequest();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => t.internal().POST('/internal/v1/handoffs', { body })),
    );
    const ids = new Set(results.map((r) => r.data?.data.id));
    expect(ids.size).toBe(1);
    expect(results.map((r) => r.response.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(
      await t.database.prisma.handoff.count({
        where: { referenceKind: 'workflow_stage', referenceId: body.reference.id },
      }),
    ).toBe(1);
  });

  test('when the workspace, project or assignee does not fit, then the call is refused', async () => {
    const stranger = await t.seedMember('owner');
    const foreignAgent = await t.seedAgent(stranger.workspace.id);
    const evicted = await t.seedAgent(member.workspace.id, { status: 'evicted', evictedAt: new Date() });
    const post = (overrides: Record<string, unknown>) =>
      t.internal().POST('/internal/v1/handoffs', { body: stageRequest(overrides) as never });

    const unknownWs = await post({ workspace_id: 'ws_unknown' });
    expect({ status: unknownWs.response.status, code: unknownWs.error?.code }).toEqual({
      status: 404,
      code: 'workspace_not_found',
    });
    const foreignProject = await post({ workspace_id: stranger.workspace.id });
    expect(foreignProject.error?.code).toBe('project_not_found');
    const foreign = await post({ assignee_agent_id: foreignAgent.id });
    expect(foreign.error?.code).toBe('assignee_not_found');
    const gone = await post({ assignee_agent_id: evicted.id });
    expect({ status: gone.response.status, code: gone.error?.code }).toEqual({
      status: 409,
      code: 'agent_evicted',
    });
    const unknownAgent = await post({ assignee_agent_id: 'agt_unknown' });
    expect({ status: unknownAgent.response.status, code: unknownAgent.error?.code }).toEqual({
      status: 400,
      code: 'assignee_not_found',
    });
    const unknownProject = await post({ project_id: 'prj_unknown' });
    expect({ status: unknownProject.response.status, code: unknownProject.error?.code }).toEqual({
      status: 400,
      code: 'project_not_found',
    });
    const noReference = await post({ reference: undefined });
    expect(noReference.error?.errors?.[0]?.location).toBe('body/reference');
  });

  test('when the assignee is stopped or lost, then a new handoff is refused 409 agent_not_running; one made while it ran is still answered', async () => {
    const post = (overrides: Record<string, unknown>) =>
      t.internal().POST('/internal/v1/handoffs', { body: stageRequest(overrides) as never });
    for (const status of ['offline', 'lost'] as const) {
      const agent = await t.seedAgent(member.workspace.id, { status });
      const refused = await post({ assignee_agent_id: agent.id });
      expect({
        status: refused.response.status,
        code: refused.error?.code,
        agent_status: (refused.error as { agent_status?: string } | undefined)?.agent_status,
      }).toEqual({ status: 409, code: 'agent_not_running', agent_status: status });
    }
    const count = () => t.database.prisma.handoff.count({ where: { workspaceId: member.workspace.id } });
    const before = await count();

    // Made while the agent ran, asked again after it stopped: the same handoff, as every repeated call.
    const agent = await t.seedAgent(member.workspace.id);
    const body = stageRequest({ assignee_agent_id: agent.id });
    const first = await t.internal().POST('/internal/v1/handoffs', { body });
    expect(first.response.status).toBe(201);
    await t.database.prisma.agent.update({ where: { id: agent.id }, data: { status: 'offline' } });
    const again = await t.internal().POST('/internal/v1/handoffs', { body });
    expect({ status: again.response.status, id: again.data?.data.id }).toEqual({
      status: 200,
      id: first.data?.data.id,
    });
    expect(await count()).toBe(before + 1);
  });

  test('when anything but the service credential calls, then it is refused and nothing is created', async () => {
    const body = stageRequest();
    const key = await createKey(t, member, { scopes: ['handoffs:write'] });
    const calls: Record<string, string>[] = [
      {},
      { 'x-api-key': key.key },
      { authorization: `Bearer ${member.token}` },
      { authorization: `Bearer ${owner.token}` },
      { 'x-svc-service-token': 'svs_not-the-right-service-token-at-all' },
    ];
    const statuses: number[] = [];
    for (const headers of calls) {
      const res = await fetch(`${t.url}/internal/v1/handoffs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 403, 403, 403, 401]);
    expect(await t.database.prisma.handoff.count({ where: { referenceId: body.reference.id } })).toBe(0);
  });
});

describe('POST /internal/v1/handoffs/{handoffId}/cancel', () => {
  const cancel = (handoffId: string, body?: { reason?: string }) =>
    t.internal().POST('/internal/v1/handoffs/{handoffId}/cancel', {
      params: { path: { handoffId } },
      ...(body ? { body } : {}),
    });

  test('when the workflow engine cancels a claimed stage handoff twice, then it is cancelled once, audited with the reason, and the second call returns it', async () => {
    const created = unwrap(await t.internal().POST('/internal/v1/handoffs', { body: stageRequest() }));
    unwrap(
      await t.client({ token: owner.token }).POST('/api/v1/agents/me/handoffs/{handoffId}/claim', {
        params: { path: { handoffId: created.id } },
      }),
    );
    const first = await cancel(created.id, { reason: 'invocation_cancelled' });
    expect(first.response.status).toBe(200);
    expect(first.data?.data).toMatchObject({ id: created.id, status: 'cancelled' });
    expect(first.data?.data.cancelled_at).not.toBeNull();

    const second = await cancel(created.id, { reason: 'invocation_cancelled' });
    expect(second.response.status).toBe(200);
    expect(second.data?.data).toMatchObject({
      id: created.id,
      status: 'cancelled',
      cancelled_at: first.data?.data.cancelled_at,
    });

    const events = await t.database.prisma.auditEvent.findMany({
      where: { targetId: created.id, action: 'handoff.cancelled' },
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actorKind: 'service', workspaceId: member.workspace.id });
    expect(events[0]!.data).toMatchObject({
      from: 'claimed',
      to: 'cancelled',
      reason: 'invocation_cancelled',
    });

    // The public API shows it cancelled, and the owner no longer has it as an assignment.
    const read = unwrap(
      await t.client({ token: member.token }).GET('/api/v1/handoffs/{handoffId}', {
        params: { path: { handoffId: created.id } },
      }),
    );
    expect(read.status).toBe('cancelled');
    const assignments = unwrap(await t.client({ token: owner.token }).GET('/api/v1/agents/me/assignments'));
    expect(assignments.map((h) => h.id)).not.toContain(created.id);
  });

  test('when no body is sent, then an open handoff is cancelled all the same', async () => {
    const created = unwrap(await t.internal().POST('/internal/v1/handoffs', { body: stageRequest() }));
    const res = await fetch(`${t.url}/internal/v1/handoffs/${created.id}/cancel`, {
      method: 'POST',
      headers: { 'x-svc-service-token': SERVICE_TOKEN },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { status: string } }).data.status).toBe('cancelled');
  });

  test('when the handoff is completed or unknown, or the reason is not short text, then it is refused with a stable code', async () => {
    const created = unwrap(await t.internal().POST('/internal/v1/handoffs', { body: stageRequest() }));
    const agent = t.client({ token: owner.token });
    const path = { params: { path: { handoffId: created.id } } };
    unwrap(await agent.POST('/api/v1/agents/me/handoffs/{handoffId}/claim', path));
    unwrap(
      await agent.POST('/api/v1/agents/me/handoffs/{handoffId}/complete', {
        ...path,
        body: { summary: 'done' },
      } as never),
    );
    const completed = await cancel(created.id, { reason: 'invocation_failed' });
    expect({ status: completed.response.status, code: completed.error?.code }).toEqual({
      status: 409,
      code: 'handoff_invalid_transition',
    });
    expect((completed.error as unknown as { current_status: string }).current_status).toBe('completed');
    const stored = await t.database.prisma.handoff.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.status).toBe('completed');

    const unknown = await cancel('hnd_doesnotexist');
    expect({ status: unknown.response.status, code: unknown.error?.code }).toEqual({
      status: 404,
      code: 'handoff_not_found',
    });

    const open = unwrap(await t.internal().POST('/internal/v1/handoffs', { body: stageRequest() }));
    const long = await cancel(open.id, { reason: 'x'.repeat(501) });
    expect({ status: long.response.status, code: long.error?.code }).toEqual({
      status: 400,
      code: 'validation_failed',
    });
    const extra = await cancel(open.id, { reason: 'ok', other: true } as never);
    expect(extra.response.status).toBe(400);
    expect((await t.database.prisma.handoff.findUniqueOrThrow({ where: { id: open.id } })).status).toBe(
      'open',
    );
  });

  test('when anything but the service credential calls, then it is refused and the handoff stays open', async () => {
    const created = unwrap(await t.internal().POST('/internal/v1/handoffs', { body: stageRequest() }));
    const key = await createKey(t, member, { scopes: ['handoffs:write'] });
    const calls: Record<string, string>[] = [
      {},
      { 'x-api-key': key.key },
      { authorization: `Bearer ${member.token}` },
      { authorization: `Bearer ${owner.token}` },
      { 'x-svc-service-token': 'svs_not-the-right-service-token-at-all' },
    ];
    const statuses: number[] = [];
    for (const headers of calls) {
      const res = await fetch(`${t.url}/internal/v1/handoffs/${created.id}/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ reason: 'not yours' }),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 403, 403, 403, 401]);
    expect((await t.database.prisma.handoff.findUniqueOrThrow({ where: { id: created.id } })).status).toBe(
      'open',
    );
  });
});
