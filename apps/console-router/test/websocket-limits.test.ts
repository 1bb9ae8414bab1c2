import http from 'node:http';
import WebSocket from 'ws';
import { createLogger, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import { eventually } from '@svc/testing';
import { createConsoleRouterService } from '../src/app';
import type { ConsoleRouterService } from '../src/app';
import { loadConsoleRouterConfig } from '../src/env';
import { PUBLIC_ORIGIN, closed, request } from './support/clients';
import { WORKSPACE_SLUG, startTokenHub, startWsAgent } from './support/token-hub';
import type { TokenHub, WsAgent } from './support/token-hub';

/**
 * The WebSocket limits (decision 91), through an in-process router in front of real WebSocket agents and a hub
 * stand-in that signs participant tokens: a caller or a route over its limit gets the handshake and a 1008
 * close naming the limit; the router at its total answers 503 before the upgrade; a caller's message over the
 * size limit never reaches the agent and closes with 1009; `/status` counts all of it.
 */
jest.setTimeout(60_000);

interface Router {
  url: string;
  service: ConsoleRouterService;
  server: RunningServer;
}

let hub: TokenHub;
let agentA: WsAgent;
let agentB: WsAgent;
const routers: Router[] = [];
const sockets: WebSocket[] = [];

async function startRouter(extra: Record<string, string>): Promise<Router> {
  const config = loadConsoleRouterConfig({
    ...hub.env(),
    CONSOLE_ROUTER_HOST: '127.0.0.1',
    CONSOLE_ROUTER_PORT: '0',
    CONSOLE_ROUTER_PUBLIC_BASE_URL: PUBLIC_ORIGIN,
    ...extra,
  });
  const logger = createLogger({ name: 'console-router', level: 'silent' });
  const service = createConsoleRouterService({ config, logger, validateResponses: true });
  const server = await startHttpServer(service.app, { host: config.host, port: config.port, logger });
  service.attach(server.server);
  await service.routes.refresh();
  const router = { url: server.url, service, server };
  routers.push(router);
  return router;
}

const wsUrl = (router: Router, agentId: string) =>
  `${router.url.replace('http://', 'ws://')}/${WORKSPACE_SLUG}/agents/${agentId}/terminal`;

/** Opens a WebSocket as `participant`; resolves once open (or once closed: the code and reason). */
function connect(
  router: Router,
  agentId: string,
  participant: string,
): Promise<{ ws: WebSocket; closedWith?: { code: number; reason: string } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(router, agentId), {
      headers: { origin: PUBLIC_ORIGIN, authorization: `Bearer ${hub.token(participant)}` },
      perMessageDeflate: false,
    });
    sockets.push(ws);
    let opened = false;
    ws.once('open', () => {
      opened = true;
      // A refusal after the handshake comes as a close frame right behind the 101.
      setTimeout(() => {
        if (ws.readyState === WebSocket.OPEN) resolve({ ws });
      }, 150);
    });
    ws.once('close', (code, reason) => {
      if (opened) resolve({ ws, closedWith: { code, reason: reason.toString() } });
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      reject(Object.assign(new Error(`upgrade answered ${res.statusCode}`), { status: res.statusCode }));
    });
    ws.once('error', (error) => {
      if (!opened) reject(error);
    });
  });
}

interface StatusBody {
  upstream_connections: { http: number; websockets: number };
  websockets: { open: number; refused: Record<string, number> } & Record<string, unknown>;
  routes: { agent_id: string; open_sockets: number }[];
}

const status = async (router: Router) =>
  (await request(`${router.url}/status`)).body as unknown as StatusBody;

beforeAll(async () => {
  hub = await startTokenHub();
  agentA = await startWsAgent();
  agentB = await startWsAgent();
  hub.setTable(['prt_ann', 'prt_bob'], { agt_alpha: agentA.port, agt_beta: agentB.port });
});

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  for (const router of routers.splice(0)) {
    router.service.close();
    await router.server.close(0);
  }
});

afterAll(async () => {
  await agentA?.close();
  await agentB?.close();
  await hub?.close();
});

describe('connections per caller and per route', () => {
  test('when a caller opens one WebSocket over CONSOLE_ROUTER_WS_MAX_PER_CALLER, then it gets a 1008 close naming the limit, and a place freed is usable again', async () => {
    const router = await startRouter({ CONSOLE_ROUTER_WS_MAX_PER_CALLER: '2' });
    const first = await connect(router, 'agt_alpha', 'prt_ann');
    const second = await connect(router, 'agt_beta', 'prt_ann');
    expect(first.closedWith).toBeUndefined();
    expect(second.closedWith).toBeUndefined();
    const third = await connect(router, 'agt_alpha', 'prt_ann');
    expect(third.closedWith).toEqual({
      code: 1008,
      reason: 'per caller WebSocket limit reached: CONSOLE_ROUTER_WS_MAX_PER_CALLER=2',
    });
    // Another caller is not held by ann's limit.
    expect((await connect(router, 'agt_alpha', 'prt_bob')).closedWith).toBeUndefined();

    first.ws.close();
    await closed(first.ws);
    await eventually(async () => (await status(router)).websockets.open === 2, 5_000, 'two WebSockets open');
    expect((await connect(router, 'agt_alpha', 'prt_ann')).closedWith).toBeUndefined();
    const body = await status(router);
    expect(body.websockets).toMatchObject({
      open: 3,
      callers: 2,
      busiest_caller: 2,
      limits: { max_per_caller: 2 },
      refused: { per_caller: 1, per_route: 0, connections: 0, message_size: 0 },
    });
  });

  test('when a route holds CONSOLE_ROUTER_WS_MAX_PER_ROUTE WebSockets, then one more gets a 1008 close naming it while other routes stay open', async () => {
    const router = await startRouter({ CONSOLE_ROUTER_WS_MAX_PER_ROUTE: '2' });
    await connect(router, 'agt_alpha', 'prt_ann');
    await connect(router, 'agt_alpha', 'prt_bob');
    const over = await connect(router, 'agt_alpha', 'prt_bob');
    expect(over.closedWith).toEqual({
      code: 1008,
      reason: 'per route WebSocket limit reached: CONSOLE_ROUTER_WS_MAX_PER_ROUTE=2',
    });
    expect((await connect(router, 'agt_beta', 'prt_bob')).closedWith).toBeUndefined();
    // The agent saw only the admitted ones.
    await eventually(() => agentA.open() === 2, 5_000, 'agent A holding two WebSockets');
  });

  test('when the router holds CONSOLE_ROUTER_WS_MAX_CONNECTIONS, then one more upgrade is answered 503 console_capacity_reached before any upgrade', async () => {
    const router = await startRouter({ CONSOLE_ROUTER_WS_MAX_CONNECTIONS: '1' });
    await connect(router, 'agt_alpha', 'prt_ann');
    const refused = await new Promise<http.IncomingMessage & { text: string }>((resolve, reject) => {
      const req = http.request(`${router.url}/${WORKSPACE_SLUG}/agents/agt_beta/terminal`, {
        headers: {
          origin: PUBLIC_ORIGIN,
          authorization: `Bearer ${hub.token('prt_bob')}`,
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(Object.assign(res, { text })));
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.text)).toMatchObject({
      status: 503,
      code: 'console_capacity_reached',
      detail: expect.stringContaining('CONSOLE_ROUTER_WS_MAX_CONNECTIONS=1'),
    });
    expect(agentB.open()).toBe(0);
    expect((await status(router)).websockets.refused.connections).toBe(1);
  });

  test('when a caller over its limit sends an upgrade without a WebSocket key, then 429 websocket_limit_reached', async () => {
    const router = await startRouter({ CONSOLE_ROUTER_WS_MAX_PER_CALLER: '1' });
    await connect(router, 'agt_alpha', 'prt_ann');
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${router.url}/${WORKSPACE_SLUG}/agents/agt_alpha/terminal`, {
        headers: {
          origin: PUBLIC_ORIGIN,
          authorization: `Bearer ${hub.token('prt_ann')}`,
          connection: 'Upgrade',
          upgrade: 'websocket',
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.text)).toMatchObject({
      code: 'websocket_limit_reached',
      detail: expect.stringContaining('CONSOLE_ROUTER_WS_MAX_PER_CALLER=1'),
    });
  });
});

describe('message size', () => {
  test('when a caller sends a message over CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES, whole or in fragments, then the agent never gets it and the client gets 1009 naming the limit', async () => {
    const router = await startRouter({ CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES: '1024' });
    for (const send of [
      (ws: WebSocket) => ws.send(Buffer.alloc(2000, 1)),
      (ws: WebSocket) => {
        ws.send(Buffer.alloc(600, 2), { fin: false });
        ws.send(Buffer.alloc(600, 2), { fin: true });
      },
    ]) {
      agentA.received.length = 0;
      const { ws } = await connect(router, 'agt_alpha', 'prt_ann');
      // Within the limit: echoed.
      const echoed = new Promise<number>((resolve) =>
        ws.once('message', (data: Buffer) => resolve(data.length)),
      );
      ws.send(Buffer.alloc(1024, 3));
      expect(await echoed).toBe(1024);
      const closing = new Promise<{ code: number; reason: string }>((resolve) =>
        ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      send(ws);
      expect(await closing).toEqual({
        code: 1009,
        reason: 'message larger than CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES=1024',
      });
      expect(agentA.received).toEqual([1024]);
    }
    await eventually(() => agentA.open() === 0, 5_000, 'agent A holding no WebSocket');
    const body = await eventually(
      async () => {
        const now = await status(router);
        return now.websockets.open === 0 && now;
      },
      5_000,
      'no WebSocket counted open',
    );
    expect(body.websockets.refused.message_size).toBe(2);
    expect(body.upstream_connections.websockets).toBe(0);
  });

  test('when a terminal streams large output to the client, then the size limit does not apply to it', async () => {
    const router = await startRouter({ CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES: '1024' });
    const { ws } = await connect(router, 'agt_alpha', 'prt_ann');
    // The agent echoes: send small pieces, yet the agent's output (each echo) is not limited; here a 1 000-byte
    // message is echoed 20 times back to back, 20 000 bytes toward the client in all.
    let got = 0;
    const all = new Promise<void>((resolve) =>
      ws.on('message', (data: Buffer) => {
        got += data.length;
        if (got >= 20_000) resolve();
      }),
    );
    for (let i = 0; i < 20; i += 1) ws.send(Buffer.alloc(1000, i));
    await all;
    expect(ws.readyState).toBe(WebSocket.OPEN);
  });
});

describe('/status', () => {
  test('when WebSockets are open to two routes, then /status counts them per route, in total and against the agents held', async () => {
    const router = await startRouter({});
    await connect(router, 'agt_alpha', 'prt_ann');
    await connect(router, 'agt_alpha', 'prt_bob');
    await connect(router, 'agt_beta', 'prt_bob');
    const body = await status(router);
    const perRoute = Object.fromEntries(body.routes.map((r) => [r.agent_id, r.open_sockets]));
    expect(perRoute).toEqual({ agt_alpha: 2, agt_beta: 1 });
    expect(body.upstream_connections.websockets).toBe(3);
    expect(body.websockets).toEqual({
      open: 3,
      callers: 2,
      busiest_caller: 2,
      limits: {
        max_connections: 10_000,
        max_per_route: 1_000,
        max_per_caller: 100,
        max_message_bytes: 1_048_576,
      },
      refused: { connections: 0, per_route: 0, per_caller: 0, message_size: 0 },
    });
    expect(agentA.open() + agentB.open()).toBe(3);
  });
});
