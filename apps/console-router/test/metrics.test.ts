import { createServer } from 'node:http';
import type { Server } from 'node:http';
import path from 'node:path';
import {
  eventually,
  freePort,
  metricValue,
  parseMetrics,
  startBuiltEntryPoint,
  waitUntilReady,
} from '@svc/testing';
import type { MetricSample, NodeProcess } from '@svc/testing';
import WebSocket, { WebSocketServer } from 'ws';
import { PUBLIC_ORIGIN, bearer, closed, openSocket, request } from './support/clients';
import { ConsoleStack } from './support/stack';
import type { RegisteredAgent } from './support/stack';

/**
 * `/metrics` of the built console router (`node dist/main.js`) in front of an agent, with the real hub serving
 * the route table and keys: forwarded requests and upgrades, the agent's answers, upstream failures, refusals
 * and open WebSockets are counted; with CONSOLE_ROUTER_METRICS_PORT the router's own listener does not serve
 * `/metrics`.
 */
jest.setTimeout(60_000);

const appDir = path.resolve(__dirname, '..');
const HEALTH_CALLS = 5;

async function scrape(url: string): Promise<MetricSample[]> {
  const res = await request(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.type).toContain('text/plain');
  return parseMetrics(res.text);
}

/** An agent's serve port: JSON on HTTP, a dropped connection on `/crash`, a WebSocket echo. */
async function startAgentServer(port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/crash')) {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  const sockets = new WebSocketServer({ server });
  sockets.on('connection', (ws) => ws.on('message', (data) => ws.send(data)));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

async function startRouter(s: ConsoleStack, extra: Record<string, string> = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = startBuiltEntryPoint(
    appDir,
    'dist/main.js',
    { ...s.routerEnv(s.home, extra), CONSOLE_ROUTER_PORT: String(port), LOG_LEVEL: 'warn' },
    { name: 'the console router' },
  );
  await waitUntilReady(proc, url);
  return { url, proc };
}

let s: ConsoleStack;
let agent: RegisteredAgent;
let agentServer: Server;
const routers: NodeProcess[] = [];

beforeAll(async () => {
  s = await ConsoleStack.start();
  agent = await s.registerAgent(s.home, 'metrics-agent');
  agentServer = await startAgentServer(agent.servePort);
});

afterAll(async () => {
  await Promise.all(routers.map((r) => r.stop()));
  await new Promise((resolve) => {
    agentServer?.close(resolve);
    agentServer?.closeAllConnections();
  });
  await s?.close();
});

describe('console router /metrics', () => {
  test('when agents are called through it, then forwarded requests, answers, failures, refusals and open WebSockets are counted', async () => {
    const router = await startRouter(s);
    routers.push(router.proc);
    const route = `${router.url}/${s.home.owner.workspace.slug}/agents/${agent.id}`;
    const auth = bearer(s.home.owner.token);

    const before = await scrape(router.url);
    expect(metricValue(before, 'svc_console_router_proxied_requests_total', { kind: 'http' })).toBe(0);
    expect(metricValue(before, 'svc_console_router_open_websockets')).toBe(0);

    for (let i = 0; i < HEALTH_CALLS; i++) {
      expect((await request(`${route}/global/health`, { headers: auth })).status).toBe(200);
    }
    const crashed = await request(`${route}/crash`, { headers: auth });
    expect(crashed.status).toBe(503);
    expect((await request(`${route}/global/health`)).status).toBe(401);
    const ws = await openSocket(`${route.replace('http:', 'ws:')}/terminal`, {
      origin: PUBLIC_ORIGIN,
      ...auth,
    });

    const during = await scrape(router.url);
    expect(metricValue(during, 'svc_console_router_proxied_requests_total', { kind: 'http' })).toBe(
      HEALTH_CALLS + 1,
    );
    expect(metricValue(during, 'svc_console_router_proxied_requests_total', { kind: 'websocket' })).toBe(1);
    expect(metricValue(during, 'svc_console_router_upstream_answers_total', { class: '2xx' })).toBe(
      HEALTH_CALLS,
    );
    expect(metricValue(during, 'svc_console_router_upstream_errors_total', { kind: 'http' })).toBe(1);
    expect(metricValue(during, 'svc_console_router_upstream_errors_total', { kind: 'websocket' })).toBe(0);
    expect(metricValue(during, 'svc_console_router_refused_total', { status: '401' })).toBe(1);
    expect(metricValue(during, 'svc_console_router_open_websockets')).toBe(1);
    // The router's own operations are labelled by operation id; agent routes never reach that histogram.
    expect(
      metricValue(during, 'svc_http_requests_total', { operation: 'consoleRouterReadiness', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(during, 'svc_http_requests_total', { operation: 'metrics', status: '200' })).toBe(1);
    expect(metricValue(during, 'svc_http_requests_total', { operation: 'proxyAgentHealth' })).toBeUndefined();
    expect(
      metricValue(during, 'process_resident_memory_bytes', { service: 'console-router' }),
    ).toBeGreaterThan(0);

    ws.close();
    await closed(ws);
    await eventually(
      async () => metricValue(await scrape(router.url), 'svc_console_router_open_websockets') === 0,
      5_000,
      'no open WebSocket in the metrics',
    );
    // Counters only grow: the same totals a scrape later.
    const after = await scrape(router.url);
    expect(metricValue(after, 'svc_console_router_proxied_requests_total', { kind: 'http' })).toBe(
      HEALTH_CALLS + 1,
    );
    expect(ws.readyState).toBe(WebSocket.CLOSED);
  });

  test('when CONSOLE_ROUTER_METRICS_PORT is set, then /metrics is served there and not on the router listener', async () => {
    const metricsPort = await freePort();
    const router = await startRouter(s, { CONSOLE_ROUTER_METRICS_PORT: String(metricsPort) });
    routers.push(router.proc);
    const onRouter = await request(`${router.url}/metrics`);
    expect(onRouter.status).toBe(404);
    expect(onRouter.type).toContain('application/problem+json');
    const samples = await scrape(`http://127.0.0.1:${metricsPort}`);
    expect(metricValue(samples, 'svc_console_router_open_websockets')).toBe(0);
    expect(
      metricValue(samples, 'process_cpu_user_seconds_total', { service: 'console-router' }),
    ).toBeGreaterThan(0);
  });
});
