import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, freePort } from '@svc/testing';
import WebSocket from 'ws';
import { controlSocketPath, createRuntimeControlClient } from '../src/data/runtime-control-client';
import type { ConfigPaths } from '../src/domain/config-paths';
import {
  assertBuilt,
  referenceAgentMain,
  runSvc,
  runtimeOutputOf,
  startSvc,
  stopSvc,
  jsonOf,
} from './support/cli';
import type { SvcProcess } from './support/cli';
import { HubStack, tempProfile } from './support/stack';
import type { StackHost } from './support/stack';

/** Opens a WebSocket; resolves once open. */
function openSocket(url: string, origin: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { origin } });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Types `echo <word>-$((a*b))` into the terminal and waits until it printed `<word>-<a*b>`. */
function echoThrough(ws: WebSocket, word: string, a: number, b: number): Promise<void> {
  const expected = `${word}-${a * b}`;
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      ws.off('message', onMessage);
      reject(new Error(`terminal did not print ${expected}; saw ${JSON.stringify(seen.slice(-500))}`));
    }, 15_000);
    const onMessage = (data: WebSocket.RawData) => {
      seen += Buffer.isBuffer(data)
        ? data.toString('utf8')
        : Buffer.from(data as ArrayBuffer).toString('utf8');
      if (seen.includes(expected)) {
        clearTimeout(timer);
        ws.off('message', onMessage);
        resolve();
      }
    };
    ws.on('message', onMessage);
    ws.send(Buffer.from(`echo ${word}-$((${a}*${b}))\n`));
  });
}

/**
 * Runtime key rotation on a running `svc runtime up` (the built CLI, the real hub, relay and console router): an
 * operator's pull from another configuration directory leaves the host running and tells it once; a re-pull on
 * the host switches the runtime to the new key without a restart and without a failed heartbeat, and the relay
 * and the router take it on SIGHUP (same processes: a console open through the router stays open).
 */
describe('svc runtime up and runtime key rotation', () => {
  jest.setTimeout(240_000);

  let stack: HubStack;
  let host: StackHost;
  let home: string;
  let paths: ConfigPaths;
  let runtime: SvcProcess | undefined;
  const control = () => createRuntimeControlClient(controlSocketPath(paths.state_dir));
  const describeRuntime = () => runtimeOutputOf(runtime);
  const heartbeatFailures = () =>
    (runtime?.output().match(/heartbeat: HTTP|runtime key: the hub refuses/g) ?? []).length;

  beforeAll(async () => {
    assertBuilt('runtime/up', 'runtime up');
    stack = await HubStack.start('rt-key', { projectCode: 'RK' });
    host = await stack.registerHost('runtime-key-1', os.tmpdir());
    ({ home, paths } = tempProfile('svc-runtime-key-'));
    await stack.writeProfile(paths, host.id);
  });

  let terminal: WebSocket | undefined;
  afterAll(async () => {
    terminal?.terminate();
    await stopSvc(runtime, 20_000);
    await stack?.close();
  });

  const readyWithBeat = async (after: number) =>
    eventually(
      async () => {
        const { data } = await control().GET('/status');
        return data &&
          data.relay.ready &&
          data.console_router.ready &&
          data.heartbeat.last_ok_at &&
          Date.parse(data.heartbeat.last_ok_at) > after
          ? data
          : undefined;
      },
      90_000,
      'runtime ready with a heartbeat',
      { describe: describeRuntime },
    );

  it('when another operator pulls, then the host keeps running on its superseded key and logs one line; a re-pull on the host switches keys with no failed heartbeat', async () => {
    runtime = startSvc(['runtime', 'up'], home, { SVC_RUNTIME_INSTANCE_ID: host.id });
    const started = await readyWithBeat(0);
    const pid = runtime.child.pid;
    const servicePids = { relay: started.relay.pid, console_router: started.console_router.pid };
    expect(servicePids.relay).toEqual(expect.any(Number));
    expect(servicePids.console_router).toEqual(expect.any(Number));
    const keyFile = path.join(paths.state_dir, 'runtime.key');
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const firstKey = fs.readFileSync(keyFile, 'utf8').trim();
    const firstKeyId = (await stack.host(host.id)).readiness.runtime_key.key_id;

    // A console open through the router before any rotation: the reference agent's terminal, with a ticket.
    const servePort = await freePort();
    const agent = await stack.startAgent('console-keeper', host.id, servePort);
    const workdir = fs.mkdtempSync(path.join(home, 'agent-'));
    const handed = await control().POST('/agents', {
      body: {
        agent_id: agent.id,
        name: 'console-keeper',
        argv: [process.execPath, referenceAgentMain],
        cwd: workdir,
        env: {
          AGENT_TOKEN: agent.token,
          HUB_URL: stack.hub.url,
          WORKFLOW_URL: 'http://127.0.0.1:9',
          AGENT_SERVE_PORT: String(servePort),
          AGENT_WORKDIR: workdir,
          LOG_LEVEL: 'warn',
        },
        serve_port: servePort,
      },
    });
    expect(handed.response.status).toBe(201);
    const route = `http://127.0.0.1:${host.routerPort}/${stack.slug}/agents/${agent.id}`;
    await eventually(
      async () => ((await fetch(`${route}/global/health`)).status === 401 ? true : undefined),
      60_000,
      'the console route reaches the agent',
      { describe: describeRuntime },
    );
    const issued = await stack.owner.hub.POST('/api/v1/agents/{agentId}/console-tickets', {
      params: { path: { agentId: agent.id } },
    });
    expect(issued.response.status).toBe(201);
    terminal = await openSocket(
      `${route.replace('http://', 'ws://')}/terminal?ticket=${issued.data!.data.ticket}`,
      `http://127.0.0.1:${host.routerPort}`,
    );
    await echoThrough(terminal, 'before', 6, 7);
    const servicesSwitched = (count: number) =>
      eventually(
        async () => {
          const lines = (file: string) =>
            (
              fs
                .readFileSync(path.join(paths.state_dir, file), 'utf8')
                .match(/switched to the runtime key/g) ?? []
            ).length;
          return lines('relay.log') >= count && lines('console-router.log') >= count ? true : undefined;
        },
        30_000,
        `the relay and the router re-read the key file (${count})`,
        { describe: describeRuntime },
      );

    // An operator checks the config from a laptop: a new key is issued, the host's stays valid for 24 h.
    const laptop = path.join(home, 'laptop-config');
    const pulled = await runSvc(
      [...stack.loginArgs('--pull-runtime'), '--json'],
      home,
      { SVC_CONFIG_DIR: laptop },
      `${stack.password}\n`,
    );
    expect(pulled.code).toBe(0);
    const superseded = await eventually(
      async () => {
        const atHub = await stack.host(host.id);
        return atHub.readiness.runtime_key.state === 'superseded' ? atHub : undefined;
      },
      30_000,
      'the hub sees the host on its superseded key',
      { describe: describeRuntime },
    );
    expect(superseded.readiness.spawn_ready).toBe(true);
    const line = await eventually(
      async () => /^.* runtime key: superseded at .*$/m.exec(runtime!.output())?.[0],
      30_000,
      'the runtime logs that its key is superseded',
      { describe: describeRuntime },
    );
    expect(line).toContain(`it stays valid until ${superseded.readiness.runtime_key.valid_until}`);
    expect(line).toContain('svc config pull-runtime');
    // The host's doctor says the same: a warning naming the rotation and the end of the overlap.
    const doctor = await runSvc(['config', 'doctor', '--json'], home, { SVC_RUNTIME_INSTANCE_ID: host.id });
    const doctorDoc = jsonOf(doctor);
    const keyCheck = (
      (doctorDoc.ok ? doctorDoc.result : doctorDoc.error) as {
        checks: Array<{ id: string; status: string; detail: string }>;
      }
    ).checks.find((c) => c.id === 'runtime_key');
    expect(keyCheck).toMatchObject({ status: 'warn', detail: expect.stringContaining('superseded') });
    expect(keyCheck!.detail).toContain(`it stops working at ${superseded.readiness.runtime_key.valid_until}`);
    // Two more heartbeats: still one line.
    const since = Date.now();
    await readyWithBeat(since);
    await readyWithBeat(Date.now());
    expect(runtime.output().match(/runtime key: superseded/g)).toHaveLength(1);

    // The operator pulls again on the host: the runtime switches without a restart.
    const repull = await runSvc(['config', 'pull-runtime', '--json'], home, {
      SVC_RUNTIME_INSTANCE_ID: host.id,
    });
    expect(repull.code).toBe(0);
    const newKey = (jsonOf(repull).result as { runtime_key: { id: string; rotated: boolean } }).runtime_key;
    expect(newKey.rotated).toBe(true);
    await eventually(
      async () => {
        const atHub = await stack.host(host.id);
        return atHub.readiness.runtime_key.state === 'current' &&
          atHub.readiness.runtime_key.key_id === newKey.id
          ? atHub
          : undefined;
      },
      30_000,
      'the host heartbeats with its new key',
      { describe: describeRuntime },
    );
    expect(runtime.output()).toMatch(
      /runtime key: the profile was re-pulled; switching to key \w+ \(relay and console router re-read it, no restart\)/,
    );
    expect(runtime.running()).toBe(true);
    expect(runtime.child.pid).toBe(pid);
    expect(heartbeatFailures()).toBe(0);

    // The relay and the router took the new key on SIGHUP: same processes, and the console opened before is
    // still open and still works.
    await servicesSwitched(1);
    const afterSwitch = (await control().GET('/status')).data!;
    expect({ relay: afterSwitch.relay.pid, console_router: afterSwitch.console_router.pid }).toEqual(
      servicePids,
    );
    expect(fs.readFileSync(keyFile, 'utf8').trim()).not.toBe(firstKey);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(terminal.readyState).toBe(WebSocket.OPEN);
    await echoThrough(terminal, 'after', 7, 7);
    // The key the router started with is refused from now on: its next route-table read uses the new key, so it
    // stays ready.
    const revoked = await stack.owner.hub.DELETE('/api/v1/workspaces/{workspace}/api-keys/{keyId}', {
      params: { path: { workspace: stack.slug, keyId: firstKeyId! } },
    });
    expect([200, 204, 404, 409]).toContain(revoked.response.status);
    const withFirst = await fetch(`${stack.hub.url}/api/v1/contract`, { headers: { 'x-api-key': firstKey } });
    expect([401, 403]).toContain(withFirst.status);
    const refreshed = await fetch(`http://127.0.0.1:${host.routerPort}/routes/refresh`, { method: 'POST' });
    expect(refreshed.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${host.routerPort}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${host.relayPort}/readyz`)).status).toBe(200);

    // A leaked key: rotated on the host with overlap 0, the old key is refused at once; the relay and the router
    // come back ready on the new key (they could not with the revoked one).
    const leaked = await runSvc(
      ['config', 'pull-runtime', '--rotate-key', '--overlap', '0', '--json'],
      home,
      {
        SVC_RUNTIME_INSTANCE_ID: host.id,
      },
    );
    expect(leaked.code).toBe(0);
    const leakedKey = (jsonOf(leaked).result as { runtime_key: { id: string } }).runtime_key;
    const switchedAt = Date.now();
    await readyWithBeat(switchedAt);
    const atHub = await eventually(
      async () => {
        const h = await stack.host(host.id);
        return h.readiness.runtime_key.key_id === leakedKey.id && h.readiness.relay_ready ? h : undefined;
      },
      60_000,
      'the host on the key issued after the leak, relay and router ready',
      { describe: describeRuntime },
    );
    expect(atHub.readiness).toMatchObject({
      relay_state: 'ready',
      console_router_state: 'ready',
      causes: [],
    });
    // Two switches, still the same relay and router, and the console still open.
    await servicesSwitched(2);
    const afterLeak = (await control().GET('/status')).data!;
    expect({ relay: afterLeak.relay.pid, console_router: afterLeak.console_router.pid }).toEqual(servicePids);
    expect(terminal.readyState).toBe(WebSocket.OPEN);
    await echoThrough(terminal, 'leak', 8, 8);
    expect(runtime.output()).not.toMatch(/(relay|console router): exited/);
    // Never a key in the output: prefixes only.
    expect(runtime.output()).not.toMatch(/svc_[a-z0-9]+_/);
  });
});
