import { unwrap } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import { createKey, startTestHub } from './support/harness';
import type { SeededAgent, SeededMember, TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

const db = () => t.database.prisma;

function send(
  credential: { token?: string; apiKey?: string },
  agentId: string,
  body = `hello ${newId('m')}`,
  kind: 'ask' | 'nudge' | 'console' = 'ask',
) {
  return t.client(credential).POST('/api/v1/agents/{agentId}/messages', {
    params: { path: { agentId } },
    body: { kind, body },
  });
}

async function deniedEvents(from: SeededAgent, to: SeededAgent) {
  return db().auditEvent.findMany({
    where: { action: 'message.denied', actorId: from.id, targetId: to.id },
  });
}

describe('peer messaging between agents', () => {
  let member: SeededMember;
  beforeAll(async () => {
    member = await t.seedMember('member');
  });

  test('when an agent messages itself, then it is delivered', async () => {
    const agent = await t.seedAgent(member.workspace.id);
    const res = await send({ token: agent.token }, agent.id, 'note to self');
    expect(res.response.status).toBe(201);
    expect(res.data?.data).toMatchObject({
      to_agent_id: agent.id,
      from: { kind: 'agent', id: agent.id },
      kind: 'ask',
      body: 'note to self',
      read_at: null,
    });
  });

  test('when agents share no team and no active project, then 403 peer_message_forbidden and the refusal is audited without the body', async () => {
    const a = await t.seedAgent(member.workspace.id);
    const b = await t.seedAgent(member.workspace.id);
    const body = `confidential ${newId('body')}`;
    const res = await send({ token: a.token }, b.id, body);
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 403,
      code: 'peer_message_forbidden',
    });
    const events = await deniedEvents(a, b);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actorKind: 'agent',
      actorId: a.id,
      targetType: 'agent',
      targetId: b.id,
      workspaceId: member.workspace.id,
    });
    expect(JSON.stringify(events)).not.toContain(body);
    expect(await db().message.count({ where: { toAgentId: b.id } })).toBe(0);
  });

  test('when the agents then join one team, then the message is delivered, with no API key involved', async () => {
    const a = await t.seedAgent(member.workspace.id);
    const b = await t.seedAgent(member.workspace.id);
    expect((await send({ token: a.token }, b.id)).response.status).toBe(403);
    await t.seedTeam(member.workspace.id, [a.id, b.id]);
    const res = await send({ token: a.token }, b.id, 'can you review PR 7?');
    expect(res.response.status).toBe(201);
    const inbox = unwrap(await t.client({ token: b.token }).GET('/api/v1/agents/me/inbox'));
    expect(inbox.map((m) => [m.from.id, m.body])).toEqual([[a.id, 'can you review PR 7?']]);
    // It works both ways.
    expect((await send({ token: b.token }, a.id, 'sure', 'nudge')).response.status).toBe(201);
  });

  test('when their teams share an active project assignment, then messages pass, and once a team is unassigned they are refused again', async () => {
    const a = await t.seedAgent(member.workspace.id);
    const b = await t.seedAgent(member.workspace.id);
    const teamA = await t.seedTeam(member.workspace.id, [a.id]);
    const teamB = await t.seedTeam(member.workspace.id, [b.id]);
    const project = await t.seedProject(member.workspace.id);
    await db().projectTeam.create({ data: { projectId: project.id, teamId: teamA.id } });
    expect((await send({ token: a.token }, b.id)).response.status).toBe(403);
    await db().projectTeam.create({ data: { projectId: project.id, teamId: teamB.id } });
    expect((await send({ token: a.token }, b.id)).response.status).toBe(201);

    await db().projectTeam.update({
      where: { projectId_teamId: { projectId: project.id, teamId: teamA.id } },
      data: { unassignedAt: new Date() },
    });
    const after = await send({ token: a.token }, b.id);
    expect({ status: after.response.status, code: after.error?.code }).toEqual({
      status: 403,
      code: 'peer_message_forbidden',
    });
    expect(await deniedEvents(a, b)).toHaveLength(2);
  });

  test("when an agent's own project is another agent's team project, or both name the same project, then they may talk", async () => {
    const project = await t.seedProject(member.workspace.id);
    const worker = await t.seedAgent(member.workspace.id, { projectId: project.id });
    const teamed = await t.seedAgent(member.workspace.id);
    const team = await t.seedTeam(member.workspace.id, [teamed.id]);
    await db().projectTeam.create({ data: { projectId: project.id, teamId: team.id } });
    expect((await send({ token: worker.token }, teamed.id)).response.status).toBe(201);
    expect((await send({ token: teamed.token }, worker.id)).response.status).toBe(201);

    const sibling = await t.seedAgent(member.workspace.id, { projectId: project.id });
    expect((await send({ token: sibling.token }, worker.id)).response.status).toBe(201);

    const elsewhere = await t.seedAgent(member.workspace.id, {
      projectId: (await t.seedProject(member.workspace.id)).id,
    });
    expect((await send({ token: elsewhere.token }, worker.id)).response.status).toBe(403);
  });

  test('when the target is in another workspace, then 404; when it is evicted, then 409 agent_evicted', async () => {
    const a = await t.seedAgent(member.workspace.id);
    const foreign = await t.seedAgent((await t.seedMember('owner')).workspace.id);
    const res = await send({ token: a.token }, foreign.id);
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 404,
      code: 'agent_not_found',
    });
    expect((await send({ token: a.token }, 'agt_missing')).response.status).toBe(404);

    const teammate = await t.seedAgent(member.workspace.id);
    await t.seedTeam(member.workspace.id, [a.id, teammate.id]);
    await db().agent.update({
      where: { id: teammate.id },
      data: { status: 'evicted', evictedAt: new Date() },
    });
    const toEvicted = await send({ token: a.token }, teammate.id);
    expect({ status: toEvicted.response.status, code: toEvicted.error?.code }).toEqual({
      status: 409,
      code: 'agent_evicted',
    });
    const byParticipant = await send({ token: member.token }, teammate.id, 'hello?', 'console');
    expect(byParticipant.error?.code).toBe('agent_evicted');
  });

  test('when the body is larger than 16 KiB of UTF-8, then 400 message_too_large', async () => {
    const agent = await t.seedAgent(member.workspace.id);
    const res = await send({ token: agent.token }, agent.id, '€'.repeat(6000));
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 400,
      code: 'message_too_large',
    });
    expect((await send({ token: agent.token }, agent.id, '€'.repeat(5000))).response.status).toBe(201);
  });
});

describe('messages from participants and keys', () => {
  test('when a member sends a console message, then it is delivered from the participant', async () => {
    const member = await t.seedMember('member');
    const agent = await t.seedAgent(member.workspace.id);
    const res = await send({ token: member.token }, agent.id, 'status please', 'console');
    expect(res.data?.data).toMatchObject({
      kind: 'console',
      from: { kind: 'participant', id: member.participantId },
      workspace_id: member.workspace.id,
    });
    const event = await db().auditEvent.findFirstOrThrow({
      where: { action: 'message.sent', targetId: agent.id },
    });
    expect(JSON.stringify(event.data)).not.toContain('status please');
  });

  test('when a viewer sends, then 403 role_forbidden; a participant of another workspace gets 404', async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const stranger = await t.seedMember('owner');
    const agent = await t.seedAgent(owner.workspace.id);
    expect((await send({ token: viewer.token }, agent.id)).error?.code).toBe('role_forbidden');
    expect((await send({ token: stranger.token }, agent.id)).response.status).toBe(404);
  });

  test('when a key with messages:write of the workspace sends, then it is delivered; other keys are refused', async () => {
    const owner = await t.seedMember('owner');
    const agent = await t.seedAgent(owner.workspace.id);
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    const res = await send({ apiKey: key.key }, agent.id, 'nudge from CI', 'nudge');
    expect(res.data?.data.from).toEqual({ kind: 'api_key', id: key.id });

    const readOnly = await createKey(t, owner, { preset: 'read-only' });
    const noScope = await send({ apiKey: readOnly.key }, agent.id);
    expect(noScope.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['messages:write'] });
    const stranger = await t.seedMember('owner');
    const foreignKey = await createKey(t, stranger, { preset: 'agent-runtime' });
    expect((await send({ apiKey: foreignKey.key }, agent.id)).response.status).toBe(404);
  });
});

describe('inboxes', () => {
  test('when an agent reads its inbox, then messages come oldest first, filter by unread and page; marking read is idempotent', async () => {
    const member = await t.seedMember('member');
    const agent = await t.seedAgent(member.workspace.id);
    const ids: string[] = [];
    for (const body of ['first', 'second', 'third']) {
      ids.push(unwrap(await send({ token: member.token }, agent.id, body, 'console')).id);
    }
    const api = t.client({ token: agent.token });
    const inbox = async (query: Record<string, string | number | boolean> = {}) =>
      unwrap(await api.GET('/api/v1/agents/me/inbox', { params: { query } })).map((m) => m.body);
    expect(await inbox()).toEqual(['first', 'second', 'third']);
    expect(await inbox({ limit: 2 })).toEqual(['first', 'second']);
    expect(await inbox({ after: ids[1] as string })).toEqual(['third']);

    const read = unwrap(
      await api.POST('/api/v1/agents/me/inbox/{messageId}/read', {
        params: { path: { messageId: ids[0] as string } },
      }),
    );
    expect(read.read_at).not.toBeNull();
    const again = unwrap(
      await api.POST('/api/v1/agents/me/inbox/{messageId}/read', {
        params: { path: { messageId: ids[0] as string } },
      }),
    );
    expect(again.read_at).toBe(read.read_at);
    expect(await inbox({ unread_only: true })).toEqual(['second', 'third']);
  });

  test("when an agent marks another agent's message read, then it is not found", async () => {
    const member = await t.seedMember('member');
    const a = await t.seedAgent(member.workspace.id);
    const b = await t.seedAgent(member.workspace.id);
    const message = unwrap(await send({ token: member.token }, b.id, 'for b', 'console'));
    const res = await t.client({ token: a.token }).POST('/api/v1/agents/me/inbox/{messageId}/read', {
      params: { path: { messageId: message.id } },
    });
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 404,
      code: 'message_not_found',
    });
    expect((await db().message.findUniqueOrThrow({ where: { id: message.id } })).readAt).toBeNull();
  });

  test("when an operator reads an agent's inbox (svc internal inbox), then it sees the messages without marking them read", async () => {
    const owner = await t.seedMember('owner');
    const viewer = await t.seedMember('viewer', owner.workspace);
    const agent = await t.seedAgent(owner.workspace.id);
    unwrap(await send({ token: owner.token }, agent.id, 'one', 'console'));
    unwrap(await send({ token: owner.token }, agent.id, 'two', 'console'));
    const key = await createKey(t, owner, { preset: 'read-only' });
    const params = { params: { path: { agentId: agent.id } } };
    const byKey = unwrap(await t.client({ apiKey: key.key }).GET('/api/v1/agents/{agentId}/inbox', params));
    expect(byKey.map((m) => m.body)).toEqual(['one', 'two']);
    const byViewer = unwrap(
      await t.client({ token: viewer.token }).GET('/api/v1/agents/{agentId}/inbox', {
        params: { path: { agentId: agent.id }, query: { unread_only: true, limit: 1 } },
      }),
    );
    expect(byViewer.map((m) => m.body)).toEqual(['one']);
    expect(await db().message.count({ where: { toAgentId: agent.id, readAt: { not: null } } })).toBe(0);

    const stranger = await t.seedMember('owner');
    const hidden = await t.client({ token: stranger.token }).GET('/api/v1/agents/{agentId}/inbox', params);
    expect({ status: hidden.response.status, code: hidden.error?.code }).toEqual({
      status: 404,
      code: 'agent_not_found',
    });
    const peer = await t.seedAgent(owner.workspace.id);
    const byAgent = await t.client({ token: peer.token }).GET('/api/v1/agents/{agentId}/inbox', params);
    expect(byAgent.error?.code).toBe('actor_not_allowed');
  });

  test('when a participant or a key calls the agent-only inbox routes, then 403', async () => {
    const owner = await t.seedMember('owner');
    const key = await createKey(t, owner, { preset: 'agent-runtime' });
    expect((await t.client({ token: owner.token }).GET('/api/v1/agents/me/inbox')).error?.code).toBe(
      'actor_not_allowed',
    );
    expect((await t.client({ apiKey: key.key }).GET('/api/v1/agents/me/inbox')).error?.code).toBe(
      'actor_not_allowed',
    );
  });
});
