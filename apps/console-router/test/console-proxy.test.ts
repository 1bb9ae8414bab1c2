import { deriveConsoleProxyKey } from '@svc/auth';
import WebSocket from 'ws';
import { eventually } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { ConsoleStack } from './support/stack';
import type { InProcessRouter, RegisteredAgent } from './support/stack';
import {
  PUBLIC_ORIGIN,
  bearer,
  closed,
  openSocket,
  readUntil,
  request,
  startEchoAgent,
} from './support/clients';
import type { EchoAgent } from './support/clients';

/**
 * The console router in front of real agents: the real hub (its build) serves the route table, tickets and
 * signing keys; the built reference agent serves its console on a registered port; the router is built in
 * process. Every answer of the router is JSON, in the contract's order (404, 503, 401, 403).
 */
jest.setTimeout(60_000);

let s: ConsoleStack;
let router: InProcessRouter;
let agent: RegisteredAgent;
let agentProcess: NodeProcess;
let peer: RegisteredAgent;
let stranger: RegisteredAgent;
let echo: EchoAgent;
let echoAgent: RegisteredAgent;
let ownerId: string;

const slug = () => s.home.owner.workspace.slug;
const routeOf = (id: string, rest = '/global/health') => `${router.url}/${slug()}/agents/${id}${rest}`;
const ownerToken = () => s.home.owner.token;
const participantOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string }).sub;

beforeAll(async () => {
  s = await ConsoleStack.start();
  ownerId = participantOf(ownerToken());
  agent = await s.registerAgent(s.home, 'console-agent');
  peer = await s.registerAgent(s.home, 'console-peer');
  stranger = await s.registerAgent(s.home, 'console-stranger', { projectCode: s.home.loneProjectCode });
  await s.team(s.home, [agent, peer]);
  echo = await startEchoAgent();
  echoAgent = await s.registerAgent(s.home, 'console-echo', { servePort: echo.port });
  agentProcess = await s.startReferenceAgent(agent);
  router = await s.startRouter(s.home);
});

afterAll(async () => {
  await echo?.close();
  await s?.close();
});

describe('a live agent route', () => {
  test('when a member calls health with a participant token, then the agent answers 200 through the router', async () => {
    const res = await request(routeOf(agent.id), { headers: bearer(ownerToken()) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: agent.id, name: 'console-agent' });
  });

  test('when the workspace id stands in for the slug, then the same agent answers', async () => {
    const res = await request(`${router.url}/${s.home.owner.workspace.id}/agents/${agent.id}/global/health`, {
      headers: bearer(ownerToken()),
    });
    expect(res.status).toBe(200);
  });

  test('when no credential is sent, then JSON 401 credential_missing naming the agent (the route reaches it)', async () => {
    const res = await request(routeOf(agent.id));
    expect(res.status).toBe(401);
    expect(res.type).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status: 401, code: 'credential_missing', agent_id: agent.id });
  });

  test('when a forged token or two credentials are sent, then JSON 401 credential_invalid', async () => {
    const forged = `${ownerToken().slice(0, -4)}AAAA`;
    expect((await request(routeOf(agent.id), { headers: bearer(forged) })).body).toMatchObject({
      code: 'credential_invalid',
      agent_id: agent.id,
    });
    const ticket = await s.ticket(s.home, agent.id);
    const both = await request(routeOf(agent.id, `/global/health?ticket=${ticket}`), {
      headers: bearer(ownerToken()),
    });
    expect(both.status).toBe(401);
    expect(both.body?.code).toBe('credential_invalid');
    const apiKey = await request(routeOf(agent.id), { headers: { 'x-api-key': s.home.runtimeKey } });
    expect(apiKey.status).toBe(401);
  });

  test('when a participant of another workspace calls, then 403 workspace_forbidden', async () => {
    const res = await request(routeOf(agent.id), { headers: bearer(s.other.owner.token) });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'workspace_forbidden', agent_id: agent.id });
  });

  test('when the agent itself or a teammate calls with its agent token, then 200; an unrelated agent gets 403 peer_not_allowed', async () => {
    expect((await request(routeOf(agent.id), { headers: bearer(agent.token) })).status).toBe(200);
    expect((await request(routeOf(agent.id), { headers: bearer(peer.token) })).status).toBe(200);
    const res = await request(routeOf(agent.id), { headers: bearer(stranger.token) });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'peer_not_allowed', agent_id: agent.id });
  });

  test('when a ticket for this agent is sent, then 200; a ticket for another agent gets 403', async () => {
    const ticket = await s.ticket(s.home, agent.id);
    expect((await request(routeOf(agent.id, `/global/health?ticket=${ticket}`))).status).toBe(200);
    const other = await s.ticket(s.home, peer.id);
    const res = await request(routeOf(agent.id, `/global/health?ticket=${other}`));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'ticket_agent_mismatch', agent_id: agent.id });
  });

  test('when a member sends a chat message, then the reply can be read through the router', async () => {
    const sent = await request(routeOf(agent.id, '/chat/messages'), {
      method: 'POST',
      headers: { ...bearer(ownerToken()), 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'what are you doing?' }),
    });
    expect(sent.status).toBe(202);
    const seq = (sent.body?.data as { seq: number }).seq;
    const reply = await eventually(
      async () => {
        const list = await request(routeOf(agent.id, `/chat/messages?after=${seq - 1}`), {
          headers: bearer(ownerToken()),
        });
        const data = list.body?.data as {
          text: string;
          in_reply_to: number | null;
          author: { kind: string };
        }[];
        return data.find((m) => m.in_reply_to === seq);
      },
      5_000,
      "the agent's reply",
      { intervalMs: 50 },
    );
    expect(reply.author.kind).toBe('agent');
    expect(reply.text).toContain('You asked: "what are you doing?"');
  });
});

describe('the terminal WebSocket', () => {
  const terminalUrl = (query: string) =>
    `${routeOf(agent.id, `/terminal${query}`).replace('http://', 'ws://')}`;

  test('when a member opens it with a ticket, then a typed command prints its output through the router', async () => {
    const ticket = await s.ticket(s.home, agent.id);
    const ws = await openSocket(terminalUrl(`?ticket=${ticket}&cols=100`));
    try {
      ws.send(Buffer.from('echo console-$((6*7))\n'));
      await readUntil(ws, 'console-42');
      const status = await request(`${router.url}/status`);
      const row = (status.body?.routes as { agent_id: string; open_sockets: number }[]).find(
        (r) => r.agent_id === agent.id,
      );
      expect(row?.open_sockets).toBe(1);
    } finally {
      ws.close();
      await closed(ws);
    }
  });

  test('when a member with an open terminal is removed from the workspace, then the router closes it at the next table', async () => {
    const member = await s.addMember(s.home, `leaving-${Date.now()}@example.test`);
    await router.router.routes.refresh();
    const ws = await openSocket(terminalUrl(`?ticket=${await s.ticketFor(member.token, agent.id)}`));
    const stays = await openSocket(terminalUrl(`?ticket=${await s.ticket(s.home, agent.id)}`));
    try {
      ws.send(Buffer.from('echo still-$((2*21))\n'));
      await readUntil(ws, 'still-42');
      await s.removeMember(s.home, member.participantId);
      await router.router.routes.refresh();
      expect(await closed(ws, 5_000)).toBeGreaterThan(0);
      expect(router.logs()).toContain('access withdrawn');
      // The owner's terminal, opened the same way, is still open and answering.
      stays.send(Buffer.from('echo owner-$((3*14))\n'));
      await readUntil(stays, 'owner-42');
      // And the removed member cannot open another one.
      const refused = await openSocket(terminalUrl(''), {
        origin: PUBLIC_ORIGIN,
        authorization: `Bearer ${member.token}`,
      }).catch((error: { status?: number; body?: { code?: string } }) => error);
      expect(refused).toMatchObject({ status: 403, body: { code: 'workspace_forbidden' } });
    } finally {
      ws.close();
      stays.close();
      await closed(stays);
    }
  });

  test('when the Origin is another site or missing, then 403 origin_not_allowed before anything else', async () => {
    const ticket = await s.ticket(s.home, agent.id);
    for (const headers of [{ origin: 'https://evil.example' }, {}] as Record<string, string>[]) {
      await expect(openSocket(terminalUrl(`?ticket=${ticket}`), headers)).rejects.toMatchObject({
        status: 403,
        body: { code: 'origin_not_allowed' },
      });
    }
  });

  test('when the host allows the control web app’s origin, then its page opens the terminal there and nowhere else', async () => {
    const control = 'https://control.example.test';
    const allowing = await s.startRouter(s.home, { CONSOLE_ROUTER_ALLOWED_ORIGINS: control });
    try {
      const terminalAt = async (base: string) =>
        `${base.replace('http://', 'ws://')}/${slug()}/agents/${agent.id}/terminal?ticket=${await s.ticket(s.home, agent.id)}`;
      const ws = await openSocket(await terminalAt(allowing.url), { origin: control });
      try {
        ws.send(Buffer.from('echo control-$((6*7))\n'));
        await readUntil(ws, 'control-42');
      } finally {
        ws.close();
        await closed(ws);
      }
      // A router that does not list it keeps refusing it.
      await expect(openSocket(await terminalAt(router.url), { origin: control })).rejects.toMatchObject({
        status: 403,
        body: { code: 'origin_not_allowed' },
      });
    } finally {
      await allowing.close();
    }
  });

  test('when an agent token opens it, then 403 actor_not_allowed (participants only)', async () => {
    await expect(
      openSocket(terminalUrl(''), { origin: PUBLIC_ORIGIN, ...bearer(agent.token) }),
    ).rejects.toMatchObject({ status: 403, body: { code: 'actor_not_allowed', agent_id: agent.id } });
  });

  test('when no credential is sent, then the upgrade is answered JSON 401', async () => {
    await expect(openSocket(terminalUrl(''))).rejects.toMatchObject({
      status: 401,
      contentType: 'application/problem+json',
      body: { code: 'credential_missing', agent_id: agent.id },
    });
  });

  test('when the agent answers the upgrade with an error, then it is relayed and both sides are closed', async () => {
    const ticket = await s.ticket(s.home, agent.id);
    await expect(openSocket(terminalUrl(`?ticket=${ticket}&cols=abc`))).rejects.toMatchObject({
      status: 400,
      body: { code: 'validation_failed' },
    });
    // The router keeps no tunnel for it.
    expect(router.router.activity.openSockets(agent.id)).toBe(0);
  });
});

describe('routing', () => {
  test('when an agent id is a prefix of the path segment, then it is not matched (whole segments only)', async () => {
    const res = await request(`${router.url}/${slug()}/agents/${agent.id}x/global/health`, {
      headers: bearer(ownerToken()),
    });
    expect(res.status).toBe(404);
    expect(res.body?.code).toBe('route_not_found');
    expect(res.body?.agent_id).toBeUndefined();
  });

  test('when the workspace or agent is unknown, then 404 route_not_found before any credential is read', async () => {
    for (const path of [
      `/${slug()}/agents/agt_unknown/global/health`,
      `/elsewhere/agents/${agent.id}/global/health`,
    ]) {
      const res = await request(`${router.url}${path}`);
      expect(res.status).toBe(404);
      expect(res.type).toContain('application/problem+json');
    }
    // Another workspace's agent is not on this host's table.
    const foreign = await s.registerAgent(s.other, 'foreign-agent');
    const res = await request(
      `${router.url}/${s.other.owner.workspace.slug}/agents/${foreign.id}/global/health`,
    );
    expect(res.status).toBe(404);
  });

  test('when the agent is registered but not listening, then 503 agent_unavailable whatever the credential', async () => {
    for (const headers of [{}, bearer(ownerToken()), bearer(s.other.owner.token)]) {
      const res = await request(routeOf(stranger.id), { headers });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'agent_unavailable' });
    }
  });

  test('when the Host is neither loopback nor the public host, then 403 host_not_allowed (DNS rebinding)', async () => {
    const res = await request(routeOf(agent.id), {
      headers: { ...bearer(ownerToken()), host: 'evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.body?.code).toBe('host_not_allowed');
    expect(
      (await request(`${router.url}/readyz`, { headers: { host: 'rebound.example:8790' } })).status,
    ).toBe(403);
    const viaPublic = await request(routeOf(agent.id), {
      headers: { ...bearer(ownerToken()), host: 'console.example.test' },
    });
    expect(viaPublic.status).toBe(200);
  });

  test('when /status is asked for through the public host, then 403; on loopback it lists routes with their last activity', async () => {
    expect(
      (await request(`${router.url}/status`, { headers: { host: 'console.example.test' } })).status,
    ).toBe(403);
    await request(routeOf(agent.id), { headers: bearer(ownerToken()) });
    const res = await request(`${router.url}/status`);
    expect(res.status).toBe(200);
    const rows = res.body?.routes as {
      agent_id: string;
      route: string;
      serve_port: number;
      last_activity_at: string | null;
    }[];
    const row = rows.find((r) => r.agent_id === agent.id);
    expect(row).toMatchObject({ route: `/${slug()}/agents/${agent.id}`, serve_port: agent.servePort });
    expect(Date.parse(row!.last_activity_at!)).toBeGreaterThan(Date.now() - 60_000);
    expect(rows.find((r) => r.agent_id === stranger.id)?.last_activity_at).toBeNull();
  });

  test('when a request is forwarded, then the agent sees the path without the prefix and no hub credential, cookie or ticket', async () => {
    await request(routeOf(echoAgent.id, '/chat/messages?after=2'), {
      headers: {
        ...bearer(ownerToken()),
        cookie: 'session=secret',
        'x-svc-console-caller': 'participant:forged',
      },
    });
    const ticket = await s.ticket(s.home, echoAgent.id);
    await request(routeOf(echoAgent.id, `/global/health?x=1&ticket=${ticket}&y=2`));
    const [first, second] = echo.seen.slice(-2);
    expect(first!.url).toBe('/chat/messages?after=2');
    expect(second!.url).toBe('/global/health?x=1&y=2');
    for (const seen of [first!, second!]) {
      expect(seen.headers.authorization).toBeUndefined();
      expect(seen.headers.cookie).toBeUndefined();
      expect(JSON.stringify(seen)).not.toContain(ticket);
      expect(seen.headers['x-svc-console-caller']).toBe(`participant:${ownerId}`);
      expect(seen.headers['x-svc-console-proxy-key']).toBe(deriveConsoleProxyKey(s.secret, echoAgent.id));
    }
  });

  test('when an upstream answers a WebSocket upgrade with plain HTTP, then the client gets it and both sides close', async () => {
    const ticket = await s.ticket(s.home, echoAgent.id);
    await expect(
      openSocket(routeOf(echoAgent.id, `/terminal?ticket=${ticket}`).replace('http://', 'ws://')),
    ).rejects.toMatchObject({ status: 200 });
    expect(router.router.activity.openSockets(echoAgent.id)).toBe(0);
  });

  test('when a new agent is registered, then POST /routes/refresh loads it and it is routable at once', async () => {
    const late = await startEchoAgent();
    try {
      const added = await s.registerAgent(s.home, 'console-late', { servePort: late.port });
      // The table in use predates the agent (the poll runs once a minute here). No request for the agent is
      // sent before the refresh: a miss would itself reload the table (see refreshOnMiss).
      const before = await request(`${router.url}/status`);
      expect((before.body?.table as { routes: number }).routes).toBe(4);
      const refreshed = await request(`${router.url}/routes/refresh`, { method: 'POST' });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toMatchObject({ routes: 5 });
      expect((await request(routeOf(added.id), { headers: bearer(ownerToken()) })).status).toBe(200);
      expect(
        (
          await request(`${router.url}/routes/refresh`, {
            method: 'POST',
            headers: { host: 'console.example.test' },
          })
        ).status,
      ).toBe(403);
    } finally {
      await late.close();
    }
  });
});

describe('an agent killed mid-work', () => {
  test('when the agent dies mid-stream and mid-WebSocket, then the router survives and answers JSON 503', async () => {
    const ticket = await s.ticket(s.home, agent.id);
    const ws = await openSocket(routeOf(agent.id, `/terminal?ticket=${ticket}`).replace('http://', 'ws://'));
    const stream = await fetch(routeOf(agent.id, '/chat/stream'), { headers: bearer(ownerToken()) });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const wsClosed = closed(ws);

    agentProcess.child.kill('SIGKILL');
    await agentProcess.exited;

    await wsClosed;
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();
    const res = await request(routeOf(agent.id), { headers: bearer(ownerToken()) });
    expect(res.status).toBe(503);
    expect(res.body?.code).toBe('agent_unavailable');
    expect(router.router.activity.openSockets(agent.id)).toBe(0);
    expect(ws.readyState).toBe(WebSocket.CLOSED);
  });
});

describe('a hub outage', () => {
  test('when the hub stops, then the last table still routes and /readyz names the failures', async () => {
    const echoTicket = await s.ticket(s.home, echoAgent.id);
    await s.hub.process.stop();

    const res = await request(routeOf(echoAgent.id, `/global/health?ticket=${echoTicket}`));
    expect(res.status).toBe(200);
    const ready = await request(`${router.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body?.checks).toMatchObject({
      hub_jwks: expect.stringMatching(/^failed: hub unreachable/),
      route_table: expect.stringMatching(/^failed: hub unreachable/),
      upstream_secret: 'ok',
    });
    expect((await request(`${router.url}/routes/refresh`, { method: 'POST' })).body?.code).toBe(
      'hub_unavailable',
    );
  });
});
