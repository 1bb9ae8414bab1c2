import { readFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { freePort, startBuiltEntryPoint, waitUntilReady } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { PUBLIC_ORIGIN, request } from './support/clients';
import { WORKSPACE_SLUG, startTokenHub, startWsAgent } from './support/token-hub';
import type { TokenHub, WsAgent } from './support/token-hub';

/**
 * Idle consoles at moderate scale (decision 91): the built router, as deployed, holds 500 idle WebSockets to a
 * real WebSocket agent; what its resident memory grows by per socket is bounded so that 10 000 fit in 300 MB
 * (the bench measures the full size), and `/status` counts every one. The agent and the clients are in this
 * process; only the router's own memory is read.
 */
jest.setTimeout(120_000);

const SOCKETS = 500;
const WARM_UP = 50;
/** 300 MB for 10 000 consoles, all of the router's memory included: growth per socket must stay under it. */
const MAX_KB_PER_SOCKET = 30;

let hub: TokenHub;
let agent: WsAgent;
let router: NodeProcess;
let url: string;
const sockets: WebSocket[] = [];

const rssKb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, ''));
};

async function open(count: number, token: string): Promise<void> {
  const batch = 50;
  for (let done = 0; done < count; done += batch) {
    await Promise.all(
      Array.from(
        { length: Math.min(batch, count - done) },
        () =>
          new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(
              `${url.replace('http://', 'ws://')}/${WORKSPACE_SLUG}/agents/agt_idle/terminal`,
              {
                headers: { origin: PUBLIC_ORIGIN, authorization: `Bearer ${token}` },
                perMessageDeflate: false,
              },
            );
            sockets.push(ws);
            ws.once('open', () => resolve());
            ws.once('error', reject);
          }),
      ),
    );
  }
}

beforeAll(async () => {
  hub = await startTokenHub();
  agent = await startWsAgent();
  hub.setTable(['prt_many'], { agt_idle: agent.port });
  const port = await freePort();
  // As deployed (decision 55): the same Node option and malloc setting.
  router = startBuiltEntryPoint(
    path.resolve(__dirname, '..'),
    'dist/main.js',
    {
      ...hub.env(),
      MALLOC_MMAP_THRESHOLD_: '131072',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      CONSOLE_ROUTER_HOST: '127.0.0.1',
      CONSOLE_ROUTER_PORT: String(port),
      CONSOLE_ROUTER_PUBLIC_BASE_URL: PUBLIC_ORIGIN,
      CONSOLE_ROUTER_WS_MAX_PER_CALLER: String(SOCKETS + WARM_UP),
    },
    { nodeArgs: ['--max-semi-space-size=4'] },
  );
  url = `http://127.0.0.1:${port}`;
  await waitUntilReady(router, url);
});

afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  await router?.stop();
  await agent?.close();
  await hub?.close();
});

test(`when ${SOCKETS} idle consoles are held, then the router's memory grows by less than ${MAX_KB_PER_SOCKET} KB per console and /status counts them all`, async () => {
  const token = hub.token('prt_many');
  const pid = router.child.pid!;
  // Warm up: the code paths and the first pools are loaded before the baseline is read.
  await open(WARM_UP, token);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = rssKb(pid);
  await open(SOCKETS, token);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const after = rssKb(pid);
  const perSocketKb = (after - before) / SOCKETS;
  console.log(
    `router RSS ${(before / 1024).toFixed(1)} MB with ${WARM_UP} consoles, ${(after / 1024).toFixed(1)} MB with ${
      SOCKETS + WARM_UP
    }: ${perSocketKb.toFixed(1)} KB per console`,
  );
  expect(agent.open()).toBe(SOCKETS + WARM_UP);
  const status = (await request(`${url}/status`)).body as {
    upstream_connections: { websockets: number };
    websockets: { open: number; callers: number };
    routes: { agent_id: string; open_sockets: number }[];
  };
  expect(status.upstream_connections.websockets).toBe(SOCKETS + WARM_UP);
  expect(status.websockets).toMatchObject({ open: SOCKETS + WARM_UP, callers: 1 });
  expect(status.routes).toEqual([
    expect.objectContaining({ agent_id: 'agt_idle', open_sockets: SOCKETS + WARM_UP }),
  ]);
  expect(perSocketKb).toBeLessThan(MAX_KB_PER_SOCKET);
});
