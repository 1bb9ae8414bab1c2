import { readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { eventually, freePort, sleep, startBuiltEntryPoint, waitUntilReady } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { PUBLIC_ORIGIN, bearer, closed, openSocket, request, startEchoAgent } from './support/clients';
import type { EchoAgent } from './support/clients';
import { ConsoleStack } from './support/stack';
import type { RegisteredAgent } from './support/stack';

/**
 * The built router (`node dist/main.js`) under failure: a thousand failed HTTP and WebSocket attempts leave
 * its open file descriptors where they started, a client resetting its connection mid-upgrade does not
 * crash it, and an idle WebSocket is closed by the idle policy.
 */
jest.setTimeout(120_000);

const appDir = path.resolve(__dirname, '..');

let s: ConsoleStack;
let router: NodeProcess;
let url: string;
let live: RegisteredAgent;
let down: RegisteredAgent;
let plainHttp: RegisteredAgent;
let echo: EchoAgent;

const fds = () => readdirSync(`/proc/${router.child.pid}/fd`).length;
const routeOf = (agent: RegisteredAgent, rest = '/global/health') =>
  `${url}/${s.home.owner.workspace.slug}/agents/${agent.id}${rest}`;

async function inBatches(total: number, size: number, attempt: (i: number) => Promise<unknown>) {
  for (let i = 0; i < total; i += size) {
    await Promise.all(Array.from({ length: Math.min(size, total - i) }, (_, j) => attempt(i + j)));
  }
}

/** Waits until the router's descriptors come back to at most `limit`; returns that count. */
function settle(limit: number): Promise<number> {
  return eventually(
    () => {
      const count = fds();
      return count <= limit && count;
    },
    10_000,
    `the router's descriptors back to at most ${limit}`,
    { describe: () => `open now: ${fds()}` },
  );
}

beforeAll(async () => {
  s = await ConsoleStack.start();
  live = await s.registerAgent(s.home, 'reliable-agent');
  down = await s.registerAgent(s.home, 'stopped-agent');
  echo = await startEchoAgent();
  plainHttp = await s.registerAgent(s.home, 'plain-http-agent', { servePort: echo.port });
  await s.startReferenceAgent(live);
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  router = startBuiltEntryPoint(
    appDir,
    'dist/main.js',
    {
      ...s.routerEnv(s.home),
      CONSOLE_ROUTER_PORT: String(port),
      CONSOLE_ROUTER_WS_IDLE_MS: '1500',
      LOG_LEVEL: 'info',
    },
    { name: 'console router', outputLimit: 20_000 },
  );
  await waitUntilReady(router, url);
});

afterAll(async () => {
  await router?.stop('SIGKILL');
  await echo?.close();
  await s?.close();
});

test('when 1,000 HTTP and WebSocket attempts fail, then the router answers each in JSON and its open file descriptors return to the baseline', async () => {
  const ticket = await s.ticket(s.home, down.id);
  const echoTicket = await s.ticket(s.home, plainHttp.id);
  // Warm up: one success of each kind, so pooled connections and caches are part of the baseline.
  expect((await request(routeOf(live), { headers: bearer(s.home.owner.token) })).status).toBe(200);
  expect((await request(routeOf(plainHttp), { headers: bearer(s.home.owner.token) })).status).toBe(200);
  const baseline = fds();

  const statuses = new Map<number, number>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  // 600 HTTP: admitted to a stopped agent (the upstream connection is refused), unauthenticated on a stopped
  // agent (the probe is refused) and on a live one (401).
  await inBatches(600, 25, async (i) => {
    const res =
      i % 3 === 0
        ? await request(routeOf(down), { headers: bearer(s.home.owner.token) })
        : i % 3 === 1
          ? await request(routeOf(down))
          : await request(routeOf(live));
    expect(res.type).toContain('application/problem+json');
    count(res.status);
  });
  // 400 WebSocket: admitted to a stopped agent, refused for its Origin, and upgraded against a server that
  // answers with plain HTTP (both sides closed).
  await inBatches(400, 20, async (i) => {
    const target =
      i % 3 === 2
        ? routeOf(plainHttp, `/terminal?ticket=${echoTicket}`)
        : routeOf(down, `/terminal?ticket=${ticket}`);
    const headers = i % 3 === 1 ? { origin: 'https://evil.example' } : { origin: PUBLIC_ORIGIN };
    await openSocket(target.replace('http://', 'ws://'), headers).then(
      (ws) => {
        ws.terminate();
        throw new Error('the upgrade should have failed');
      },
      (error: { status?: number }) => count(error.status ?? 0),
    );
  });

  expect(Object.fromEntries(statuses)).toEqual({ 503: 200 + 200 + 134, 401: 200, 403: 133, 200: 133 });
  expect(router.running()).toBe(true);
  const after = await settle(baseline + 2);
  expect(after).toBeLessThanOrEqual(baseline + 2);
  expect((await request(routeOf(live), { headers: bearer(s.home.owner.token) })).status).toBe(200);
});

test('when clients reset their connections during upgrades, then the router does not crash', async () => {
  const ticket = await s.ticket(s.home, live.id);
  const baseline = fds();
  const target = new URL(routeOf(live, `/terminal?ticket=${ticket}`));
  await inBatches(50, 10, async (i) => {
    const socket = net.connect(Number(target.port), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      [
        `GET ${target.pathname}${target.search} HTTP/1.1`,
        `Host: 127.0.0.1:${target.port}`,
        `Origin: ${PUBLIC_ORIGIN}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        `Sec-WebSocket-Key: ${Buffer.from(`reset-${i}`.padEnd(16, '.')).toString('base64')}`,
        '',
        '',
      ].join('\r\n'),
    );
    // Reset at a different moment each time: at once, or once the router is working on it.
    await sleep(i % 5);
    socket.resetAndDestroy();
  });
  await sleep(200);
  expect(router.running()).toBe(true);
  expect((await request(routeOf(live), { headers: bearer(s.home.owner.token) })).status).toBe(200);
  expect(await settle(baseline + 2)).toBeLessThanOrEqual(baseline + 2);
  // The terminals those upgrades may have opened are gone with them (closing both sides takes a moment).
  const openSockets = async () => {
    const status = await request(`${url}/status`);
    return (status.body?.routes as { agent_id: string; open_sockets: number }[]).find(
      (r) => r.agent_id === live.id,
    )?.open_sockets;
  };
  await eventually(async () => (await openSockets()) === 0, 5_000, "the route's open sockets closed");
});

test('when a WebSocket carries no bytes either way for CONSOLE_ROUTER_WS_IDLE_MS, then the router closes it', async () => {
  const ticket = await s.ticket(s.home, live.id);
  const ws = await openSocket(routeOf(live, `/terminal?ticket=${ticket}`).replace('http://', 'ws://'));
  const started = Date.now();
  await closed(ws, 10_000);
  // The shell's prompt is the last byte (it may come just before `started`); 1.5 s later, plus at most one
  // sweep, the socket is closed.
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  // The router's log line reaches this process through a pipe, a moment after the close.
  await eventually(() => router.stdout().includes('idle WebSocket closed'), 3_000, 'the idle close logged', {
    intervalMs: 50,
  });
});
