import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { unwrap } from '@svc/contracts';
import { eventually, startFakeCloudflare } from '@svc/testing';
import type { FakeCloudflare } from '@svc/testing';
import { tunnelConnectorFiles } from '../src/data/tunnel-connector';
import type { ConfigPaths } from '../src/domain/config-paths';
import {
  assertBuilt,
  isAlive,
  jsonOf,
  modeOf,
  runSvc,
  runtimeOutputOf,
  startSvc,
  stopSvc,
} from './support/cli';
import type { SvcProcess } from './support/cli';
import { HubStack, tempProfile } from './support/stack';
import type { StackHost } from './support/stack';

/**
 * The host side of a Cloudflare tunnel: the real hub (its build) provisions the tunnel against a local fake of
 * Cloudflare's API; `svc config doctor` says whether `cloudflared` is there; `svc runtime up` (the built CLI)
 * writes the connector token to a 0600 file, runs and supervises the connector, and reports its readiness in
 * the host's heartbeats. `cloudflared` itself is the external binary: a small stand-in on PATH that records how
 * it was started and answers `/ready` on its metrics address like the real one.
 */
describe('svc runtime up: the tunnel connector', () => {
  jest.setTimeout(180_000);

  let fake: FakeCloudflare;
  let stack: HubStack;
  let host: StackHost;
  let home: string;
  let paths: ConfigPaths;
  let runtime: SvcProcess | undefined;
  const binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-fake-cloudflared-'));
  const calls = path.join(binDir, 'calls.jsonl');
  const systemPath = '/usr/local/bin:/usr/bin:/bin';

  interface Call {
    pid: number;
    args: string[];
    token: string;
    mode: number;
  }
  const callsMade = (): Call[] =>
    fs.existsSync(calls)
      ? fs
          .readFileSync(calls, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Call)
      : [];

  beforeAll(async () => {
    assertBuilt('runtime/up', 'runtime up');
    fs.writeFileSync(
      path.join(binDir, 'cloudflared'),
      `#!${process.execPath}
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const args = process.argv.slice(2);
const file = args[args.indexOf('--token-file') + 1];
const port = Number(args[args.indexOf('--metrics') + 1].split(':')[1]);
const record = { pid: process.pid, args, token: fs.readFileSync(file, 'utf8'), mode: fs.statSync(file).mode & 0o777 };
fs.appendFileSync(path.join(__dirname, 'calls.jsonl'), JSON.stringify(record) + '\\n');
http
  .createServer((req, res) => {
    res.writeHead(req.url === '/ready' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 200, readyConnections: 4, connectorId: 'stand-in' }));
  })
  .listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
`,
      { mode: 0o755 },
    );

    fake = await startFakeCloudflare();
    const keys = `k1:${randomBytes(32).toString('base64')}`;
    // The hub's own command seals its Cloudflare API token.
    const sealed = execFileSync(
      process.execPath,
      [path.resolve(__dirname, '..', '..', 'hub-api', 'dist', 'seal-config-secret.js')],
      { input: fake.apiToken, env: { PATH: systemPath, HUB_ENCRYPTION_KEYS: keys } },
    )
      .toString()
      .trim();
    stack = await HubStack.start('rt-tunnel', {
      hubEnv: {
        HUB_ENCRYPTION_KEYS: keys,
        HUB_TUNNEL_PROVIDER: 'cloudflare',
        HUB_CLOUDFLARE_API_URL: fake.apiUrl,
        HUB_CLOUDFLARE_ACCOUNT_ID: fake.accountId,
        HUB_CLOUDFLARE_ZONE_ID: fake.zoneId,
        HUB_CLOUDFLARE_ZONE_NAME: 'svc-tunnels.test',
        HUB_CLOUDFLARE_API_TOKEN_SEALED: sealed,
      },
    });
    host = await stack.registerHost('tunnel-host', os.tmpdir());
    ({ home, paths } = tempProfile('svc-runtime-tunnel-'));
    await stack.writeProfile(paths, host.id);
  });

  afterAll(async () => {
    await stopSvc(runtime, 20_000);
    await stack?.close();
    await fake?.close();
    fs.rmSync(binDir, { recursive: true, force: true });
  });

  /** The tunnel that is not deleted (deleted ones stay in the fake, as in Cloudflare's API). */
  const tunnelId = () => [...fake.tunnels.values()].find((tunnel) => tunnel.deleted_at === null)!.id;
  const provision = async () =>
    unwrap(
      await stack.owner.hub.POST(
        '/api/v1/workspaces/{workspace}/infrastructure/runtime-environments/{environment}/tunnels',
        {
          params: { path: { workspace: stack.slug, environment: 'edge' } },
          body: { runtime_instance_ids: [host.id] },
        },
      ),
    );
  const environment = async () =>
    unwrap(
      await stack.owner.hub.GET(
        '/api/v1/workspaces/{workspace}/infrastructure/runtime-environments/{environment}/tunnels',
        { params: { path: { workspace: stack.slug, environment: 'edge' } } },
      ),
    );

  it('when a tunnel is provisioned while the runtime is up, then it runs cloudflared with a 0600 token file, restarts it when it dies, reports it ready in heartbeats and removes the token on stop', async () => {
    runtime = startSvc(['runtime', 'up', '--expected-workspace', stack.slug], home, {
      SVC_RUNTIME_INSTANCE_ID: host.id,
      PATH: `${binDir}:${path.dirname(process.execPath)}:${process.env.PATH ?? systemPath}`,
    });
    const describeRuntime = () => runtimeOutputOf(runtime);
    await eventually(async () => runtime!.output().includes(' is up;'), 60_000, 'the runtime is up', {
      describe: describeRuntime,
    });
    // No environment, no tunnel: nothing to run.
    expect(callsMade()).toEqual([]);

    await provision();
    const [first] = await eventually(
      async () => callsMade()[0] && callsMade(),
      60_000,
      'cloudflared started',
      { describe: describeRuntime },
    );
    const files = tunnelConnectorFiles(paths.state_dir);
    expect(first!.args).toEqual([
      'tunnel',
      '--no-autoupdate',
      '--metrics',
      expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      'run',
      '--token-file',
      files.token_file,
    ]);
    expect(first!.mode).toBe(0o600);
    expect(first!.token).toBe(fake.tokenOf(tunnelId()));
    expect(modeOf(files.dir)).toBe(0o700);
    // The token is in its file only: never on the command line or in the runtime's output.
    expect(first!.args.join(' ')).not.toContain(first!.token);
    expect(runtime.output()).not.toContain(first!.token);

    await eventually(
      async () => (await environment()).hosts[0]?.connector_ready === true,
      40_000,
      'the hub shows the connector ready',
      { describe: describeRuntime },
    );

    // The connector dies: supervision starts it again with the same token file.
    process.kill(first!.pid, 'SIGKILL');
    const second = await eventually(
      async () => callsMade().find((call) => call.pid !== first!.pid),
      30_000,
      'cloudflared restarted',
      { describe: describeRuntime },
    );
    expect(second.args).toEqual(
      first!.args.map((arg) => (arg.startsWith('127.0.0.1:') ? expect.any(String) : arg)),
    );
    expect(second.token).toBe(first!.token);

    runtime.child.kill('SIGTERM');
    await runtime.exited;
    expect(isAlive(second.pid)).toBe(false);
    expect(fs.existsSync(files.token_file)).toBe(false);
  });

  it('when cloudflared is not installed, then doctor fails the tunnel_connector check with an install hint; once it is on PATH, the check passes', async () => {
    // Pulled again: the profile now names the environment's Cloudflare tunnel.
    await stack.writeProfile(paths, host.id);
    const doctor = async (PATH: string) => {
      const doc = jsonOf<{
        checks: Array<{ id: string; status: string; detail: string; fix: string | null }>;
      }>(await runSvc(['config', 'doctor', '--json'], home, { PATH, SVC_RUNTIME_INSTANCE_ID: host.id }));
      return (
        (doc.ok ? doc.result : doc.error) as {
          checks: Array<{ id: string; status: string; fix: string | null }>;
        }
      ).checks.find((check) => check.id === 'tunnel_connector');
    };
    const missing = await doctor(`${path.dirname(process.execPath)}:${systemPath}`);
    expect(missing).toMatchObject({ status: 'fail', fix: expect.stringContaining('install cloudflared') });
    const present = await doctor(`${binDir}:${path.dirname(process.execPath)}:${systemPath}`);
    expect(present).toMatchObject({ status: 'pass', fix: null });
  });

  it('when the tunnel is deleted while the runtime is up, then its connector stops and the token file goes; a tunnel provisioned again gets a connector with its own token', async () => {
    const before = callsMade().length;
    runtime = startSvc(['runtime', 'up', '--expected-workspace', stack.slug], home, {
      SVC_RUNTIME_INSTANCE_ID: host.id,
      PATH: `${binDir}:${path.dirname(process.execPath)}:${process.env.PATH ?? systemPath}`,
    });
    const describeRuntime = () => runtimeOutputOf(runtime);
    const running = await eventually(
      async () => callsMade()[before],
      60_000,
      'cloudflared started for the active tunnel',
      { describe: describeRuntime },
    );
    const files = tunnelConnectorFiles(paths.state_dir);
    const deletedId = tunnelId();
    expect(running.token).toBe(fake.tokenOf(deletedId));

    unwrap(
      await stack.owner.hub.DELETE(
        '/api/v1/workspaces/{workspace}/infrastructure/runtime-environments/{environment}/tunnels',
        { params: { path: { workspace: stack.slug, environment: 'edge' } } },
      ),
    );
    // The token file goes right after the process has ended, and then the line is logged.
    await eventually(
      async () =>
        !isAlive(running.pid) &&
        !fs.existsSync(files.token_file) &&
        runtime!.output().includes('tunnel connector: cloudflared stopped'),
      40_000,
      'cloudflared stopped, its token file gone and the stop logged',
      { describe: describeRuntime },
    );
    expect(runtime.output()).toContain(
      `tunnel connector: cloudflared stopped (tunnel ${deletedId} is deleted)`,
    );
    // Not restarted by supervision: the connector is no longer wanted.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(callsMade()).toHaveLength(before + 1);

    await provision();
    const replacing = await eventually(
      async () => callsMade()[before + 1],
      40_000,
      'cloudflared started for the new tunnel',
      { describe: describeRuntime },
    );
    expect(tunnelId()).not.toBe(deletedId);
    expect(replacing.token).toBe(fake.tokenOf(tunnelId()));
    expect(runtime.output()).not.toContain(replacing.token);

    runtime.child.kill('SIGTERM');
    await runtime.exited;
    expect(isAlive(replacing.pid)).toBe(false);
  });
});
