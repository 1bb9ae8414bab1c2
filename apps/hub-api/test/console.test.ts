import { createRemoteJwks, createTokenVerifier } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import { createTeam } from './support/agents-fixtures';
import { createKey, startTestHub } from './support/harness';
import type { SeededAgent, SeededMember, TestHub } from './support/harness';
import { expectNoSecretsStored } from './support/runtime-helpers';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

const db = () => t.database.prisma;

let port = 4300;
/** An agent on the host with a serve port of its own (default: online). */
function seedServed(
  workspaceId: string,
  hostId: string,
  overrides: Parameters<TestHub['seedAgent']>[1] = {},
): Promise<SeededAgent> {
  port += 1;
  return t.seedAgent(workspaceId, { runtimeInstanceId: hostId, servePort: port, ...overrides });
}

/** A key with `runtime-config:read`, as a runtime-config pull mints for the host. */
async function runtimeKey(owner: SeededMember): Promise<string> {
  return (await createKey(t, owner, { preset: 'agent-runtime' })).key;
}

function getTable(apiKey: string, hostId: string, ifNoneMatch?: string) {
  return fetch(`${t.url}/api/v1/runtime-hosts/${hostId}/console-routes`, {
    headers: { 'x-api-key': apiKey, ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }) },
  });
}

async function tableOf(apiKey: string, hostId: string) {
  return unwrap(
    await t.client({ apiKey }).GET('/api/v1/runtime-hosts/{hostId}/console-routes', {
      params: { path: { hostId } },
    }),
  );
}

function createTicket(credential: { token?: string; apiKey?: string }, agentId: string) {
  return t.client(credential).POST('/api/v1/agents/{agentId}/console-tickets', {
    params: { path: { agentId } },
  });
}

function decodePayload(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('the console route table', () => {
  let owner: SeededMember;
  let key: string;
  let hostId: string;
  beforeAll(async () => {
    owner = await t.seedMember('owner');
    key = await runtimeKey(owner);
    hostId = (await t.seedHost(owner.workspace.id)).id;
  });

  test('when the host has agents, then the table routes those with a serve port that are not evicted, stopped ones included', async () => {
    const online = await seedServed(owner.workspace.id, hostId);
    const stopped = await seedServed(owner.workspace.id, hostId, {
      status: 'offline',
      stoppedAt: new Date(),
    });
    await seedServed(owner.workspace.id, hostId, { status: 'evicted', evictedAt: new Date() });
    await t.seedAgent(owner.workspace.id, { runtimeInstanceId: hostId, servePort: null });
    const otherHost = (await t.seedHost(owner.workspace.id)).id;
    await seedServed(owner.workspace.id, otherHost);

    const res = await getTable(key, hostId);
    expect(res.status).toBe(200);
    const table = ((await res.json()) as { data: Awaited<ReturnType<typeof tableOf>> }).data;
    expect(res.headers.get('etag')).toBe(`"${table.version}"`);
    expect(table).toMatchObject({
      host_id: hostId,
      workspace: { id: owner.workspace.id, slug: owner.workspace.slug },
    });
    expect(table.version).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(table.generated_at)).not.toBeNaN();
    const route = (a: SeededAgent) => `/${owner.workspace.slug}/agents/${a.id}`;
    const expected = [online, stopped]
      .map((a) => ({ agent_id: a.id, agent_name: a.name, route: route(a) }))
      .sort((a, b) => (a.route < b.route ? -1 : 1));
    expect(table.routes.map(({ agent_id, agent_name, route }) => ({ agent_id, agent_name, route }))).toEqual(
      expected,
    );
    const byId = new Map(table.routes.map((r) => [r.agent_id, r]));
    expect(byId.get(online.id)).toMatchObject({ status: 'online', peers: [] });
    expect(byId.get(stopped.id)).toMatchObject({ status: 'offline', peers: [] });
    expect(new Set(table.routes.map((r) => r.serve_port)).size).toBe(2);
  });

  test("when the workspace has members, then the table lists every member's participant id", async () => {
    const viewer = await t.seedMember('viewer', owner.workspace);
    const table = await tableOf(key, hostId);
    expect(table.members).toEqual([owner.participantId, viewer.participantId].sort());
  });

  test('when agents share a team or an active project, then they are peers; unrelated, evicted and unassigned ones are not', async () => {
    const member = await t.seedMember('owner');
    const host = (await t.seedHost(member.workspace.id)).id;
    const apiKey = await runtimeKey(member);
    const ws = member.workspace.id;
    const a = await seedServed(ws, host);
    const teammate = await seedServed(ws, host);
    const evictedTeammate = await seedServed(ws, host, { status: 'evicted', evictedAt: new Date() });
    await t.seedTeam(ws, [a.id, teammate.id, evictedTeammate.id]);
    // `a`'s team is assigned to a project that is `onProject`'s own project.
    const project = await t.seedProject(ws);
    const projectTeam = await t.seedTeam(ws, [a.id]);
    await db().projectTeam.create({ data: { projectId: project.id, teamId: projectTeam.id } });
    const onProject = await seedServed(ws, host, { projectId: project.id });
    // A peer placed on another host is a peer all the same.
    const elsewhere = await t.seedAgent(ws, { projectId: project.id });
    // An ended assignment connects nobody.
    const ended = await t.seedProject(ws);
    const loner = await seedServed(ws, host, { projectId: ended.id });
    const endedTeam = await t.seedTeam(ws, [(await seedServed(ws, host)).id]);
    await db().projectTeam.create({
      data: { projectId: ended.id, teamId: endedTeam.id, unassignedAt: new Date() },
    });
    const unrelated = await seedServed(ws, host);

    const table = await tableOf(apiKey, host);
    const peers = new Map(table.routes.map((r) => [r.agent_id, r.peers]));
    expect(peers.get(a.id)).toEqual([teammate.id, onProject.id, elsewhere.id].sort());
    expect(peers.get(teammate.id)).toEqual([a.id]);
    expect(peers.get(onProject.id)).toEqual([a.id, elsewhere.id].sort());
    expect(peers.get(loner.id)).toEqual([]);
    expect(peers.get(unrelated.id)).toEqual([]);
    expect(peers.has(evictedTeammate.id)).toBe(false);
    expect(peers.has(elsewhere.id)).toBe(false);
  });

  test('when If-None-Match names the current version, then 304 without a body; a changed table answers 200 again', async () => {
    const agent = await seedServed(owner.workspace.id, hostId);
    const first = await getTable(key, hostId);
    const etag = first.headers.get('etag')!;
    const version = ((await first.json()) as { data: { version: string } }).data.version;
    expect(etag).toBe(`"${version}"`);

    for (const header of [etag, `W/${etag}`, version, `"other", ${etag}`]) {
      const unchanged = await getTable(key, hostId, header);
      expect(unchanged.status).toBe(304);
      expect(unchanged.headers.get('etag')).toBe(etag);
      expect(await unchanged.text()).toBe('');
    }
    const stale = await getTable(key, hostId, '"not-the-version"');
    expect(stale.status).toBe(200);

    // Stopping an agent changes its status, so the version.
    unwrap(
      await t.client({ token: owner.token }).POST('/api/v1/agents/{agentId}/stop', {
        params: { path: { agentId: agent.id } },
      }),
    );
    const afterStop = await getTable(key, hostId, etag);
    expect(afterStop.status).toBe(200);
    const stopVersion = ((await afterStop.json()) as { data: { version: string } }).data.version;
    expect(stopVersion).not.toBe(version);

    // Starting it again (the status a start records) brings back the first table, and so its version.
    await db().agent.update({ where: { id: agent.id }, data: { status: 'online', startedAt: new Date() } });
    const afterStart = await tableOf(key, hostId);
    expect(afterStart.version).not.toBe(stopVersion);
    expect(afterStart.version).toBe(version);

    // A team membership changes peers.
    const other = await seedServed(owner.workspace.id, hostId);
    const before = (await tableOf(key, hostId)).version;
    const team = await createTeam(t, owner);
    for (const member of [agent, other]) {
      unwrap(
        await t.client({ token: owner.token }).PUT('/api/v1/teams/{teamId}/agents/{agentId}', {
          params: { path: { teamId: team.id, agentId: member.id } },
        }),
      );
    }
    const afterTeam = await tableOf(key, hostId);
    expect(afterTeam.version).not.toBe(before);
    expect(afterTeam.routes.find((r) => r.agent_id === agent.id)?.peers).toEqual([other.id]);
  });

  test('when nothing changed, then two reads give the same version', async () => {
    const [a, b] = [await tableOf(key, hostId), await tableOf(key, hostId)];
    expect(a.version).toBe(b.version);
  });

  test('when the key lacks runtime-config:read, then 403', async () => {
    const reader = (await createKey(t, owner, { preset: 'read-only' })).key;
    const res = await getTable(reader, hostId);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('scope_missing');
  });

  test("when the host is another workspace's, then 404 runtime_host_not_found", async () => {
    const stranger = await t.seedMember('owner');
    const strangerHost = (await t.seedHost(stranger.workspace.id)).id;
    const res = await getTable(key, strangerHost);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('runtime_host_not_found');
  });

  test('when the id is a runtime bundle id (wrt_…), then 400 like the other host routes', async () => {
    const res = await getTable(key, 'wrt_abc123');
    const inventory = await fetch(`${t.url}/api/v1/runtime-hosts/wrt_abc123`, {
      headers: { 'x-api-key': key },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string };
    expect(body.code).toBe(((await inventory.json()) as { code: string }).code);
    expect(inventory.status).toBe(400);
  });
});

describe('console tickets', () => {
  let owner: SeededMember;
  let agent: SeededAgent;
  beforeAll(async () => {
    owner = await t.seedMember('owner');
    agent = await t.seedAgent(owner.workspace.id, { servePort: 4341 });
  });

  test('when a member asks, then 201 with a 60 s console JWT bound to the participant, workspace and agent, verifiable through the JWKS', async () => {
    const res = await createTicket({ token: owner.token }, agent.id);
    expect(res.response.status).toBe(201);
    expect(res.response.headers.get('cache-control')).toBe('no-store');
    const ticket = res.data!.data;
    expect(ticket).toMatchObject({ agent_id: agent.id, workspace_id: owner.workspace.id });

    const payload = decodePayload(ticket.ticket);
    expect(payload).toMatchObject({
      aud: 'console',
      sub: owner.participantId,
      ws: owner.workspace.id,
      agent: agent.id,
      iss: 'http://hub.test',
    });
    expect((payload.exp as number) - (payload.iat as number)).toBeLessThanOrEqual(60);
    expect(Date.parse(ticket.expires_at)).toBe((payload.exp as number) * 1000);
    expect(Date.parse(ticket.expires_at) - Date.now()).toBeLessThanOrEqual(60_000);

    const verifier = createTokenVerifier({
      issuer: 'http://hub.test',
      getJwks: createRemoteJwks({ url: `${t.url}/.well-known/jwks.json` }),
    });
    const verified = await verifier.verify(ticket.ticket, { audience: 'console' });
    expect(verified).toMatchObject({
      sub: owner.participantId,
      aud: 'console',
      claims: { ws: owner.workspace.id, agent: agent.id },
    });
    await expect(verifier.verify(ticket.ticket, { audience: 'participant' })).rejects.toThrow();
  });

  test("when a ticket is presented to the hub's own routes, then 401: it is not a participant token", async () => {
    const ticket = unwrap(await createTicket({ token: owner.token }, agent.id)).ticket;
    const me = await t.client({ token: ticket }).GET('/api/v1/me');
    expect(me.response.status).toBe(401);
    const read = await t.client({ token: ticket }).GET('/api/v1/agents/{agentId}', {
      params: { path: { agentId: agent.id } },
    });
    expect(read.response.status).toBe(401);
  });

  test('when a ticket is issued, then it is audited with its id and expiry, never its value', async () => {
    const ticket = unwrap(await createTicket({ token: owner.token }, agent.id));
    const jti = decodePayload(ticket.ticket).jti as string;
    const rows = await db().auditEvent.findMany({
      where: { action: 'console.ticket.issued', targetId: agent.id },
    });
    const row = rows.find((r) => (r.data as { token_id?: string }).token_id === jti);
    expect(row).toMatchObject({
      workspaceId: owner.workspace.id,
      actorKind: 'participant',
      actorId: owner.participantId,
      targetType: 'agent',
      targetId: agent.id,
      data: { token_id: jti, expires_at: ticket.expires_at },
    });
    await expectNoSecretsStored(t, owner.workspace.id, [ticket.ticket]);
  });

  test('when the participant is a member with any role, then the ticket is issued', async () => {
    const viewer = await t.seedMember('viewer', owner.workspace);
    const res = await createTicket({ token: viewer.token }, agent.id);
    expect(res.response.status).toBe(201);
    expect(decodePayload(res.data!.data.ticket).sub).toBe(viewer.participantId);
  });

  test("when the participant is not a member of the agent's workspace, then 404 like a missing agent", async () => {
    const stranger = await t.seedMember('owner');
    const res = await createTicket({ token: stranger.token }, agent.id);
    const missing = await createTicket({ token: stranger.token }, newId('agt'));
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 404,
      code: 'agent_not_found',
    });
    expect({ status: missing.response.status, code: missing.error?.code }).toEqual({
      status: 404,
      code: 'agent_not_found',
    });
  });

  test('when the agent is evicted, then 404', async () => {
    const evicted = await t.seedAgent(owner.workspace.id, { status: 'evicted', evictedAt: new Date() });
    const res = await createTicket({ token: owner.token }, evicted.id);
    expect({ status: res.response.status, code: res.error?.code }).toEqual({
      status: 404,
      code: 'agent_not_found',
    });
  });

  test('when an API key or an agent asks, then 403: tickets are for participants', async () => {
    const apiKey = (await createKey(t, owner, { preset: 'automation' })).key;
    expect((await createTicket({ apiKey }, agent.id)).response.status).toBe(403);
    expect((await createTicket({ token: agent.token }, agent.id)).response.status).toBe(403);
  });
});
