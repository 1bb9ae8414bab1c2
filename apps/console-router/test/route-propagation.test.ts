import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { ascending, percentile, testRedisUrl } from '@svc/testing';
import { PUBLIC_ORIGIN, bearer, closed, openSocket, request } from './support/clients';
import { ConsoleStack } from './support/stack';
import type { InProcessRouter } from './support/stack';

/**
 * Route propagation (decision 73): the real hub announces on Redis that a host's route table changed, and the
 * router reloads it from the hub at once. The router polls only once a minute here, so every change seen within
 * a second came by the announcement. An agent started at the hub is routable within a second; a stopped or
 * evicted one is not, and the router closes its WebSockets and its pooled connections to it within a second,
 * while the agent's server is still up (as between a stop and the process's exit).
 */
jest.setTimeout(240_000);

const PREFIX = `rp${randomBytes(4).toString('hex')}`;
const STARTS = 12;

/** A server standing for an agent: HTTP 200 to anything and a WebSocket echo, counting its open sockets. */
interface AgentServer {
  port: number;
  connections(): Promise<number>;
  close(): Promise<void>;
}

async function startAgentServer(): Promise<AgentServer> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket) => socket.on('message', (data) => socket.send(data)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () =>
      new Promise((resolve, reject) =>
        server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
      ),
    close: async () => {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let s: ConsoleStack;
let router: InProcessRouter;
const servers: AgentServer[] = [];

const slug = () => s.home.owner.workspace.slug;
const routeOf = (agentId: string, rest = '/global/health') =>
  `${router.url}/${slug()}/agents/${agentId}${rest}`;
const auth = () => bearer(s.home.owner.token);

async function agentServer(): Promise<AgentServer> {
  const server = await startAgentServer();
  servers.push(server);
  return server;
}

/** Milliseconds until `check` holds, polled every 5 ms, at most `limitMs` (then the time so far). */
async function msUntil(check: () => boolean | Promise<boolean>, started: number, limitMs = 10_000) {
  while (!(await check())) {
    if (performance.now() - started > limitMs) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
}

beforeAll(async () => {
  s = await ConsoleStack.start({ hubEnv: { HUB_REDIS_URL: testRedisUrl(), HUB_REDIS_PREFIX: PREFIX } });
  router = await s.startRouter(s.home, {
    CONSOLE_ROUTER_REDIS_URL: testRedisUrl(),
    CONSOLE_ROUTER_REDIS_PREFIX: PREFIX,
    CONSOLE_ROUTER_POLL_MS: '60000',
  });
  await router.router.wakes!.ready;
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await s?.close();
});

test('when agents are started at the hub, then each is routable through the router by announcement (p50 and p99 reported)', async () => {
  const toRoute: number[] = [];
  const toFirst200: number[] = [];
  for (let i = 0; i < STARTS; i += 1) {
    const server = await agentServer();
    const agent = await s.registerAgent(s.home, `propagated-${i}`, { servePort: server.port, start: false });
    // The registration is announced too: the router knows the agent, stopped, and refuses it.
    const known = () => router.router.routes.current()?.find(slug(), agent.id) !== undefined;
    expect(await msUntil(known, performance.now(), 5_000)).toBeLessThan(5_000);
    expect((await request(routeOf(agent.id), { headers: auth() })).status).toBe(503);
    const started = performance.now();
    await s.startAgent(s.home, agent.id);
    toRoute.push(
      await msUntil(() => router.router.routes.current()?.find(slug(), agent.id)?.running === true, started),
    );
    let status = 0;
    toFirst200.push(
      await msUntil(async () => {
        status = (await request(routeOf(agent.id), { headers: auth() })).status;
        return status === 200;
      }, started),
    );
    expect(status).toBe(200);
  }
  const figures = {
    route_received_ms: { p50: percentile(ascending(toRoute), 50), p99: percentile(ascending(toRoute), 99) },
    first_200_ms: { p50: percentile(ascending(toFirst200), 50), p99: percentile(ascending(toFirst200), 99) },
  };
  console.log(
    `route propagation over ${STARTS} starts, from the hub's start call: ${JSON.stringify(figures)}`,
  );
  // The router re-reads the table every 60 s here: a route well within that came by announcement. The 1 s
  // target is the bench's (`bench/console-router.mjs`), not a timed assertion on a shared machine.
  expect(figures.first_200_ms.p99).toBeLessThan(10_000);
  expect(router.router.wakes!.woken).toBeGreaterThanOrEqual(STARTS);
});

describe.each([
  ['stopped', 'stop', 503, 'agent_unavailable'],
  ['evicted', 'evict', 404, 'route_not_found'],
] as const)('an agent %s at the hub', (done, action, status, code) => {
  test(`when it is ${done} with a WebSocket and keep-alive connections open, then the route and every socket to it are gone by announcement`, async () => {
    const server = await agentServer();
    const agent = await s.registerAgent(s.home, `closing-${action}`, { servePort: server.port });
    // The start's announcement reaches the router a few tens of milliseconds after the hub answered.
    await msUntil(
      () => router.router.routes.current()?.find(slug(), agent.id)?.running === true,
      performance.now(),
    );
    expect((await request(routeOf(agent.id), { headers: auth() })).status).toBe(200);
    const ticket = await s.ticket(s.home, agent.id);
    const ws: WebSocket = await openSocket(
      routeOf(agent.id, `/terminal?ticket=${ticket}`).replace('http://', 'ws://'),
      { origin: PUBLIC_ORIGIN },
    );
    const wsClosed = closed(ws, 5_000);
    // A pooled keep-alive connection of the router's and the WebSocket's, both to the agent; /status counts them.
    expect(await server.connections()).toBeGreaterThanOrEqual(2);
    const held = async () =>
      (await request(`${router.url}/status`)).body?.upstream_connections as {
        http: number;
        websockets: number;
      };
    const during = await held();
    expect(during).toEqual({ http: expect.any(Number), websockets: 1 });
    expect(during.http).toBeGreaterThanOrEqual(1);

    const started = performance.now();
    await s.agentAction(s.home, agent.id, action);
    const closedAt = await msUntil(() => ws.readyState === WebSocket.CLOSED, started, 5_000);
    const drainedAt = await msUntil(async () => (await server.connections()) === 0, started, 5_000);
    const refused = await request(routeOf(agent.id), { headers: auth() });
    console.log(
      `${action}: WebSocket closed after ${closedAt.toFixed(0)} ms, agent connections 0 after ${drainedAt.toFixed(0)} ms`,
    );
    await wsClosed;
    // By announcement (the re-read is every 60 s); the 1 s target is the bench's.
    expect(closedAt).toBeLessThan(5_000);
    expect(drainedAt).toBeLessThan(5_000);
    expect(await server.connections()).toBe(0);
    // Connections to other, started agents stay; this agent's are gone.
    const after = await held();
    expect(after.websockets).toBe(0);
    expect(after.http).toBeLessThan(during.http);
    expect(refused.status).toBe(status);
    expect(refused.body?.code).toBe(code);
    // Nothing listens on the agent's side any more, yet the router kept the agent's server untouched.
    expect((await fetch(`http://127.0.0.1:${server.port}/global/health`)).status).toBe(200);
  });
});

test('when an announcement names another workspace or is not JSON, then the router is not woken', async () => {
  const { Redis } = await import('ioredis');
  const publisher = new Redis(testRedisUrl());
  try {
    const before = router.router.wakes!.woken;
    await publisher.publish(
      `${PREFIX}:console-routes`,
      JSON.stringify({ workspace_id: 'wsp_other', host_id: 'rti_other', agent_id: 'agt_x' }),
    );
    await publisher.publish(`${PREFIX}:console-routes`, 'not json');
    await publisher.publish(
      `${PREFIX}:console-routes`,
      JSON.stringify({ workspace_id: 'wsp_other', host_id: s.home.host.id, agent_id: 'agt_x' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Only the one naming this host woke it.
    expect(router.router.wakes!.woken).toBe(before + 1);
  } finally {
    publisher.disconnect();
  }
});
