import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import {
  devStackSettings,
  eventually,
  exitWithin,
  freePort,
  removeDevStack,
  startBuiltEntryPoint,
  startDevStack,
} from '@svc/testing';
import type { DevStackSettings, NodeProcess } from '@svc/testing';
import type { DevStackFile } from '../src/state';

jest.setTimeout(240_000);

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-replicas-'));
let settings: DevStackSettings;
let stack: NodeProcess | undefined;

const children = () =>
  JSON.parse(readFileSync(path.join(stateDir, 'children.json'), 'utf8')) as Array<{
    name: string;
    pid: number;
  }>;
const pidOf = (name: string) => children().find((c) => c.name === name)?.pid;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  settings = await devStackSettings('devrepl', stateDir);
});

/** The replicated stack, started by the first test that needs it and shared by the next ones. */
async function replicatedStack(): Promise<NodeProcess> {
  stack ??= await startDevStack({ ...settings.env, SVC_DEV_REPLICAS: '2' }, 180_000);
  return stack;
}

const stackFile = () =>
  JSON.parse(readFileSync(path.join(stateDir, 'dev-stack.json'), 'utf8')) as DevStackFile;

/** `svc runtime up`'s children (relay, console routers, agents), as the runtime records them. */
const runtimeChildren = (file: DevStackFile) =>
  JSON.parse(readFileSync(file.runtime_host.children_file, 'utf8')) as Array<{ name: string; pid: number }>;

interface Answer {
  status: number;
  code: unknown;
  agent_id: unknown;
  body: Record<string, unknown> | undefined;
}

async function answer(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let body: Record<string, unknown> | undefined;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  return { status: res.status, code: body?.code, agent_id: body?.agent_id, body };
}

/** Opens the agent's terminal through `base` with the participant's token, from a loopback page's origin. */
function openTerminal(url: string, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), {
      headers: { authorization: `Bearer ${token}`, origin: 'http://127.0.0.1' },
    });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Types `command` into the terminal and waits until it has printed `expected`. */
function typeAndRead(ws: WebSocket, command: string, expected: string, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      ws.off('message', onMessage);
      reject(new Error(`the terminal did not print ${expected}; saw ${JSON.stringify(seen.slice(-500))}`));
    }, timeoutMs);
    const onMessage = (data: WebSocket.RawData) => {
      seen += Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
      if (seen.includes(expected)) {
        clearTimeout(timer);
        ws.off('message', onMessage);
        resolve();
      }
    };
    ws.on('message', onMessage);
    ws.send(Buffer.from(`${command}\n`));
  });
}

/** A route's row in a router's `/status` (reading it never reloads the router's table). */
async function routeRow(routerUrl: string, agentId: string) {
  const status = await answer(`${routerUrl}/status`);
  const routes = (status.body?.routes ?? []) as Array<{
    agent_id: string;
    running: boolean;
    open_sockets: number;
  }>;
  return routes.find((r) => r.agent_id === agentId);
}

afterAll(async () => {
  await removeDevStack(settings, stack);
});

describe('pnpm start --replicas 2', () => {
  test('when two console routers serve the host behind HAProxy, then they answer alike, a started agent is routed by both, and a console survives the other router’s kill -9', async () => {
    const running = await replicatedStack();
    const file = stackFile();
    const [a, b] = file.console_routers;
    expect(file.console_routers.map((r) => r.name)).toEqual(['console-router-1', 'console-router-2']);
    expect(running.stdout()).toMatch(/svc runtime up --routers 2 --router-ports \d+,\d+/);
    // Each router on its own port, named with its pid in the runtime's children.json; HAProxy on the router URL.
    const routerPid = (name: string) => runtimeChildren(file).find((c) => c.name === name)?.pid;
    expect(routerPid('console-router-1')).toEqual(expect.any(Number));
    expect(routerPid('console-router-2')).toEqual(expect.any(Number));
    expect(new Set([a!.url, b!.url, file.console_router_url]).size).toBe(3);
    const token = file.participant.token;
    const auth = { authorization: `Bearer ${token}` };
    const slug = file.workspace.slug;
    const route = (base: string, agentId: string, rest: string) => `${base}/${slug}/agents/${agentId}${rest}`;

    // Alike: probes, 401 without or with a bad credential (naming the agent), 404 for an unknown agent, 200 with
    // the participant's token — on each router and through the balancer.
    const cases = async (base: string) => ({
      healthz: (await answer(`${base}/healthz`)).status,
      readyz: (await answer(`${base}/readyz`)).status,
      missing: await answer(route(base, file.agent.id, '/global/health')),
      invalid: await answer(route(base, file.agent.id, '/global/health'), {
        headers: { authorization: 'Bearer not-a-token' },
      }),
      unknown: await answer(route(base, 'agt_nobody', '/global/health'), { headers: auth }),
      member: await answer(route(base, file.agent.id, '/global/health'), { headers: auth }),
    });
    const shape = (c: Awaited<ReturnType<typeof cases>>) => ({
      healthz: c.healthz,
      readyz: c.readyz,
      missing: [c.missing.status, c.missing.code, c.missing.agent_id],
      invalid: [c.invalid.status, c.invalid.code, c.invalid.agent_id],
      unknown: [c.unknown.status, c.unknown.code],
      member: [c.member.status, Object.keys(c.member.body ?? {}).sort()],
    });
    const viaA = shape(await cases(a!.url));
    expect(viaA).toMatchObject({
      healthz: 200,
      readyz: 200,
      missing: [401, 'credential_missing', file.agent.id],
      invalid: [401, 'credential_invalid', file.agent.id],
      unknown: [404, 'route_not_found'],
      member: [200, expect.any(Array)],
    });
    expect(shape(await cases(b!.url))).toEqual(viaA);
    expect(shape(await cases(file.console_router_url))).toEqual(viaA);
    // Chat: a message sent through one router is in the conversation read through the other.
    const text = `hello from router 1 ${Date.now()}`;
    const sent = await answer(route(a!.url, file.agent.id, '/chat/messages'), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    });
    expect(sent.status).toBeLessThan(300);
    const conversation = await answer(route(b!.url, file.agent.id, '/chat/messages?after=0'), {
      headers: auth,
    });
    expect(conversation.status).toBe(200);
    expect((conversation.body?.data as Array<{ text: string }>).map((m) => m.text)).toContain(text);

    // An agent started with `svc start` is routed by both routers: measured from the hub's start of it to the
    // route running in each router's table (read from /status, which never reloads it). Reported, not asserted.
    const svcEnv = {
      HOME: os.homedir(),
      NO_COLOR: '1',
      SVC_CONFIG_DIR: file.runtime_host.svc_config_dir,
      SVC_RUNTIME_INSTANCE_ID: file.runtime_host.id,
      SVC_AGENT_WORKDIR_ROOT: path.join(stateDir, 'agents'),
      SVC_WORKFLOW_URL: file.workflow_url,
    };
    const seen: Record<string, number> = {};
    let watching = true;
    let agentId: string | undefined;
    const watch = (async () => {
      while (watching) {
        if (agentId) {
          for (const r of [a!, b!]) {
            if (
              seen[r.name] === undefined &&
              (await routeRow(r.url, agentId).catch(() => undefined))?.running
            )
              seen[r.name] = Date.now();
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const svc = path.resolve(__dirname, '..', '..', '..', 'apps', 'svc-cli', 'bin', 'run.js');
    const servePort = await freePort();
    const start = startBuiltEntryPoint(path.dirname(svc), svc, svcEnv, {
      args: [
        'start',
        '--name',
        'second-console-agent',
        '--project',
        file.project.code,
        '--capabilities',
        'console',
        '--model',
        'local/echo',
        '--serve-port',
        String(servePort),
        '--json',
      ],
    });
    // The agent's id as soon as the hub registered it (its route exists, stopped, before the start).
    await eventually(
      async () => {
        const routes = (await answer(`${a!.url}/status`)).body?.routes as Array<{
          agent_id: string;
          serve_port: number;
        }>;
        agentId = routes.find((r) => r.serve_port === servePort)?.agent_id;
        return agentId !== undefined || !start.running();
      },
      60_000,
      'the second agent registered',
    );
    expect(await exitWithin(start, 90_000)).toBe(0);
    const started = JSON.parse(start.stdout()) as { result: { agent_id: string } };
    expect(started.result.agent_id).toBe(agentId);
    await eventually(() => Object.keys(seen).length === 2, 30_000, 'the route running on both routers');
    watching = false;
    await watch;
    // When the hub started it (the runtime hands it over and refreshes the routers after that).
    const atHub = await answer(`${file.hub_url}/api/v1/agents/${agentId}`, { headers: auth });
    const startedAt = Date.parse((atHub.body?.data as { started_at: string }).started_at);
    console.log(
      `route propagation to each router, from the hub's start of the agent: ${JSON.stringify(Object.fromEntries(Object.entries(seen).map(([n, t]) => [n, t - startedAt])))} ms`,
    );
    for (const r of [a!, b!]) {
      await eventually(
        async () => (await answer(route(r.url, agentId!, '/global/health'))).status === 401,
        60_000,
        `${r.name} reaches the second agent`,
      );
    }

    // A terminal through router 1 survives kill -9 of router 2; a new connection through HAProxy after the kill
    // goes to router 1.
    const terminal = await openTerminal(route(a!.url, file.agent.id, '/terminal'), token);
    try {
      await typeAndRead(terminal, 'echo before-$((6*7))', 'before-42');
      const killed = routerPid('console-router-2')!;
      process.kill(killed, 'SIGKILL');
      await eventually(
        () =>
          fetch(`${b!.url}/healthz`).then(
            () => false,
            () => true,
          ),
        10_000,
        'router 2 gone',
      );
      await typeAndRead(terminal, 'echo after-$((7*7))', 'after-49');
      expect(terminal.readyState).toBe(WebSocket.OPEN);
      // Through the balancer, while router 2 is down: HTTP answers and a new terminal, both from router 1.
      for (let i = 0; i < 4; i += 1) {
        expect(
          (await answer(route(file.console_router_url, file.agent.id, '/global/health'), { headers: auth }))
            .status,
        ).toBe(200);
      }
      const second = await openTerminal(route(file.console_router_url, file.agent.id, '/terminal'), token);
      try {
        await typeAndRead(second, 'echo balanced-$((8*8))', 'balanced-64');
        expect((await routeRow(a!.url, file.agent.id))?.open_sockets).toBe(2);
      } finally {
        second.close();
      }
      // The runtime starts router 2 again on its port, under a new pid.
      await eventually(
        async () => {
          const pid = routerPid('console-router-2');
          return (
            pid !== undefined &&
            pid !== killed &&
            (await answer(`${b!.url}/readyz`).catch(() => undefined))?.status === 200
          );
        },
        60_000,
        'router 2 started again and ready',
      );
      expect(terminal.readyState).toBe(WebSocket.OPEN);
    } finally {
      terminal.close();
    }
  });

  test('when a replica is killed, then the others answer behind HAProxy, it is started again, and a stop stops all', async () => {
    stack = await replicatedStack();
    const file = stackFile();
    const front = /haproxy in front of 2 hubs \(ports (\d+), (\d+)\), 2 Workflow APIs/.exec(stack.stdout());
    expect(front).not.toBeNull();
    const hubPorts = [Number(front![1]), Number(front![2])];
    expect(children().map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'hub-api-1',
        'hub-api-2',
        'workflow-api-1',
        'workflow-api-2',
        'workflow-worker-1',
        'workflow-worker-2',
        'haproxy',
      ]),
    );
    // Each replica answers on its own port, and the public ports are HAProxy's.
    for (const port of hubPorts) expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const errors: string[] = [];
    const me = () =>
      fetch(`${file.hub_url}/api/v1/me`, {
        headers: { authorization: `Bearer ${file.participant.token}` },
      }).then(
        (r) => r.status,
        (error: Error) => {
          errors.push(`${error.message}: ${String((error.cause as Error | undefined)?.message)}`);
          return 0;
        },
      );
    expect(await me()).toBe(200);

    // kill -9 of one hub: the stack carries on, HAProxy sends requests to the other, and it comes back.
    const killed = pidOf('hub-api-1')!;
    process.kill(killed, 'SIGKILL');
    const statuses: number[] = [];
    const until = Date.now() + 6_000;
    while (Date.now() < until) {
      statuses.push(await me());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await eventually(
      () => {
        const pid = pidOf('hub-api-1');
        return pid !== undefined && pid !== killed;
      },
      30_000,
      'hub-api-1 started again',
    );
    await eventually(
      async () => (await fetch(`http://127.0.0.1:${hubPorts[0]}/readyz`).catch(() => null))?.status === 200,
      60_000,
      'the new hub-api-1 ready',
    );
    expect(stack.running()).toBe(true);
    expect(stack.stdout()).toMatch(/hub-api-1 exited \(SIGKILL\); starting it again/);
    const failed = statuses.filter((s) => s !== 200).length;
    console.log(
      `while one hub was down: ${statuses.length} requests, ${failed} not 200 ${JSON.stringify(statuses)} ${errors.join('; ')}`,
    );
    // A request in flight on the killed replica may be lost (the SDK retries it); the rest go to the other.
    expect(failed).toBeLessThanOrEqual(1);
    const after = await me();
    if (after !== 200) throw new Error(`${after}: ${errors.join('; ')}\n${stack.stdout().slice(-4000)}`);

    // Ctrl-C stops every replica and HAProxy; nothing is left for the next start.
    const pids = children().map((c) => c.pid);
    stack.child.kill('SIGINT');
    expect(await exitWithin(stack, 90_000)).toBe(0);
    expect(stack.stdout()).toContain('every service exited cleanly');
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(path.join(stateDir, 'children.json'))).toBe(false);
  });

  test('when --replicas is not a whole number from 1 to 8, then the launcher says so in one line and exits 1', async () => {
    const bad = startBuiltEntryPoint(path.resolve(__dirname, '..'), 'dist/main.js', settings.env, {
      args: ['--replicas', '0'],
    });
    expect(await exitWithin(bad, 30_000)).toBe(1);
    expect(bad.stderr().trim()).toBe(
      '--replicas must be a whole number from 1 to 8 (got "0"); usage: pnpm start [--replicas N]  (N from 1 to 8)',
    );
  });
});
