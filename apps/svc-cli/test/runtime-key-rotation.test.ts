import os from 'node:os';
import path from 'node:path';
import { eventually } from '@svc/testing';
import { controlSocketPath, createRuntimeControlClient } from '../src/data/runtime-control-client';
import type { ConfigPaths } from '../src/domain/config-paths';
import { assertBuilt, runSvc, runtimeOutputOf, startSvc, stopSvc, jsonOf } from './support/cli';
import type { SvcProcess } from './support/cli';
import { HubStack, tempProfile } from './support/stack';
import type { StackHost } from './support/stack';

/**
 * Runtime key rotation on a running `svc runtime up` (the built CLI, the real hub, relay and console router): an
 * operator's pull from another configuration directory leaves the host running and tells it once; a re-pull on
 * the host switches the runtime to the new key without a restart and without a failed heartbeat.
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

  afterAll(async () => {
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
    await readyWithBeat(0);
    const pid = runtime.child.pid;

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
    expect(runtime.output()).toMatch(/runtime key: the profile was re-pulled; switching to key /);
    expect(runtime.running()).toBe(true);
    expect(runtime.child.pid).toBe(pid);
    expect(heartbeatFailures()).toBe(0);

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
    // Never a key in the output: prefixes only.
    expect(runtime.output()).not.toMatch(/svc_[a-z0-9]+_/);
  });
});
