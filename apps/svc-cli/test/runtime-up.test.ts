import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, freePort } from '@svc/testing';
import { agentLogFile, agentRuntimeHome } from '../src/data/agent-state';
import { controlSocketPath, createRuntimeControlClient } from '../src/data/runtime-control-client';
import type { RuntimeControlClient } from '../src/data/runtime-control-client';
import type { ConfigPaths } from '../src/domain/config-paths';
import {
  assertBuilt,
  isAlive,
  modeOf,
  referenceAgentMain,
  runSvc,
  runtimeOutputOf,
  startSvc,
  stopSvc,
} from './support/cli';
import type { SvcProcess } from './support/cli';
import { HubStack, tempProfile } from './support/stack';
import type { RuntimeConfig, StackHost } from './support/stack';

/**
 * One file because every test here works on the same running `svc runtime up` (started once; a start costs
 * the relay, the console router and the first heartbeat), in order.
 *
 * `svc runtime up` end to end: the built CLI against the real hub (its build, on a fresh database), running the
 * real relay and console router, supervising real agent processes, and stopped with real signals.
 */
describe('svc runtime up', () => {
  jest.setTimeout(180_000);

  let stack: HubStack;
  let host: StackHost;
  let home: string;
  let paths: ConfigPaths;
  let config: RuntimeConfig;
  let runtime: SvcProcess | undefined;
  let control: RuntimeControlClient;
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-runtime-work-'));
  const secretsOf = () => [config.auth.workspace_api_key, config.auth.relay_token];

  beforeAll(async () => {
    assertBuilt('runtime/up', 'runtime up');
    stack = await HubStack.start('rt-up', { projectCode: 'RT' });
    host = await stack.registerHost('runtime-1', os.tmpdir());
    ({ home, paths } = tempProfile('svc-runtime-up-'));
    config = await stack.writeProfile(paths, host.id);
    control = createRuntimeControlClient(controlSocketPath(paths.state_dir));
  });

  afterAll(async () => {
    await stopSvc(runtime, 20_000);
    await stack?.close();
  });

  const describeRuntime = () => runtimeOutputOf(runtime);

  it('when --dry-run --json runs, then it prints the plan with variable names only and writes nothing', async () => {
    const result = await runSvc(['runtime', 'up', '--dry-run', '--json'], home);

    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout).result;
    expect(plan).toMatchObject({
      runtime_instance_id: host.id,
      workspace: stack.slug,
      systemd_unit: 'infra/systemd/svc-runtime.service',
      control_socket: controlSocketPath(paths.state_dir),
    });
    const [relay, router] = plan.processes;
    expect(relay).toMatchObject({
      name: 'relay',
      port: host.relayPort,
      argv: [
        process.execPath,
        '--max-semi-space-size=4',
        expect.stringMatching(/relay[/\\]dist[/\\]main\.js$/),
      ],
    });
    expect(router).toMatchObject({
      name: 'console-router',
      port: host.routerPort,
      argv: [
        process.execPath,
        '--max-semi-space-size=4',
        expect.stringMatching(/console-router[/\\]dist[/\\]main\.js$/),
      ],
    });
    expect(relay.env).toEqual(
      expect.arrayContaining(['RELAY_HOST', 'RELAY_PORT', 'SVC_RELAY_TOKEN', 'SVC_WORKSPACE_API_KEY_FILE']),
    );
    expect(router.env).toEqual(
      expect.arrayContaining([
        'SVC_RUNTIME_INSTANCE_ID',
        'CONSOLE_ROUTER_UPSTREAM_SECRET',
        'HUB_URL',
        'SVC_WORKSPACE_API_KEY_FILE',
      ]),
    );
    // The key reaches the relay and the router through an owner-only file, not their environment.
    expect(relay.env).not.toContain('SVC_WORKSPACE_API_KEY');
    expect(router.env).not.toContain('SVC_WORKSPACE_API_KEY');
    for (const secret of secretsOf()) expect(result.stdout + result.stderr).not.toContain(secret);
    expect(fs.existsSync(paths.state_dir)).toBe(false);
  });

  it('when --routers 2 names two ports, then the plan runs two console routers there and leaves the host console port to the balancer', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const result = await runSvc(
      ['runtime', 'up', '--routers', '2', '--router-ports', `${p1},${p2}`, '--dry-run', '--json'],
      home,
      { CONSOLE_ROUTER_REDIS_URL: 'redis://127.0.0.1:6379', CONSOLE_ROUTER_REDIS_PREFIX: 'svc' },
    );

    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout).result;
    const routers = plan.processes.filter((p: { name: string }) => p.name !== 'relay');
    expect(routers).toEqual([
      expect.objectContaining({ name: 'console-router-1', port: p1, url: `http://127.0.0.1:${p1}` }),
      expect.objectContaining({ name: 'console-router-2', port: p2, url: `http://127.0.0.1:${p2}` }),
    ]);
    for (const router of routers) {
      expect(router.env).toEqual(
        expect.arrayContaining([
          'CONSOLE_ROUTER_PORT',
          'CONSOLE_ROUTER_REDIS_URL',
          'CONSOLE_ROUTER_REDIS_PREFIX',
        ]),
      );
      expect(router.log_file).toBe(path.join(paths.state_dir, `${router.name}.log`));
    }
    expect(plan.console_balancer_url).toBe(`http://127.0.0.1:${host.routerPort}`);

    const bad = await runSvc(
      ['runtime', 'up', '--routers', '3', '--router-ports', `${p1},${p2}`, '--json'],
      home,
    );
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error).toMatchObject({
      code: 'console_router_ports_invalid',
      exit_code: 2,
    });
    expect(fs.existsSync(paths.state_dir)).toBe(false);
  });

  it('when SVC_RUNTIME_INSTANCE_ID is a bundle id (wrt_), then it is refused by name', async () => {
    const result = await runSvc(['runtime', 'up', '--json'], home, { SVC_RUNTIME_INSTANCE_ID: 'wrt_abc123' });

    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error).toMatchObject({
      code: 'runtime_bundle_id_not_allowed',
      exit_code: 1,
    });
    expect(fs.existsSync(paths.state_dir)).toBe(false);
  });

  it('when a bundle carries a wrt_ id, then the plan keeps the rti_ host id and reports the bundle id apart', async () => {
    const bundle = path.join(home, 'runtime.env');
    fs.writeFileSync(bundle, `SVC_RUNTIME_INSTANCE_ID=wrt_bundle42\nSVC_WORKSPACE=${stack.slug}\n`);

    const result = await runSvc(['runtime', 'up', '--bundle', bundle, '--dry-run', '--json'], home);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).result).toMatchObject({
      runtime_instance_id: host.id,
      bundle_id: 'wrt_bundle42',
    });
  });

  it('when --expected-workspace names another workspace, or the bundle is of another workspace, then it is refused', async () => {
    const expected = await runSvc(['runtime', 'up', '--expected-workspace', 'other-ws', '--json'], home);
    expect(expected.code).toBe(1);
    expect(JSON.parse(expected.stdout).error).toMatchObject({
      code: 'workspace_mismatch',
      expected_workspace: 'other-ws',
    });

    const bundle = path.join(home, 'other.env');
    fs.writeFileSync(bundle, 'SVC_WORKSPACE=other-ws\n');
    const other = await runSvc(
      ['runtime', 'up', '--bundle', bundle, '--expected-workspace', stack.slug, '--json'],
      home,
    );
    expect(other.code).toBe(1);
    expect(JSON.parse(other.stdout).error.code).toMatch(/workspace_mismatch/);
    expect(fs.existsSync(paths.state_dir)).toBe(false);
  });

  it('when the profile has no pulled runtime config, then it exits 4 with the fix', async () => {
    const { home: bare } = tempProfile('svc-runtime-bare-');

    const result = await runSvc(['runtime', 'up', '--json'], bare);

    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout).error).toMatchObject({
      code: 'auth_required',
      fix: expect.stringContaining('svc config pull-runtime'),
    });
  });

  it('when it runs, then relay and router are ready, the hub sees fresh heartbeats and the control socket answers', async () => {
    runtime = startSvc(['runtime', 'up', '--expected-workspace', stack.slug], home, {
      SVC_RUNTIME_INSTANCE_ID: host.id,
    });

    const status = await eventually(
      async () => {
        const { data } = await control.GET('/status');
        return data && data.relay.ready && data.console_router.ready && data.heartbeat.last_ok_at
          ? data
          : undefined;
      },
      90_000,
      'runtime ready with a heartbeat',
      { describe: describeRuntime },
    );
    expect(status).toMatchObject({
      profile: 'default',
      workspace: stack.slug,
      runtime_instance_id: host.id,
      agents: [],
    });
    expect(status.relay.url).toBe(`http://127.0.0.1:${host.relayPort}`);

    const atHub = await stack.host(host.id);
    expect(atHub.readiness).toMatchObject({
      heartbeat_fresh: true,
      relay_ready: true,
      console_router_ready: true,
      spawn_ready: true,
    });
    expect(atHub.runtime_version).toBe('0.1.0');

    const files = [
      'control.sock',
      'runtime.pid',
      'console.secret',
      'runtime.key',
      'relay.log',
      'console-router.log',
    ];
    for (const file of files) expect([file, modeOf(path.join(paths.state_dir, file))]).toEqual([file, 0o600]);
    expect(modeOf(paths.state_dir)).toBe(0o700);
  });

  it('when a second runtime up starts for the same profile, then it is refused with runtime_already_running', async () => {
    const second = await runSvc(['runtime', 'up', '--json'], home);

    expect(second.code).toBe(1);
    expect(JSON.parse(second.stdout).error).toMatchObject({
      code: 'runtime_already_running',
      pid: runtime!.child.pid,
    });
    expect(fs.existsSync(controlSocketPath(paths.state_dir))).toBe(true);
  });

  it('when runtime status and internal status run, then they show the running runtime and the host at the hub, no secrets', async () => {
    const status = await runSvc(['runtime', 'status', '--json'], home);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout).result;
    expect(report.local).toMatchObject({ running: true, status: { runtime_instance_id: host.id } });
    expect(report.hub).toMatchObject({ reachable: true, host_id: host.id, readiness: { spawn_ready: true } });
    expect(report.hub.heartbeat_age_seconds).toBeLessThan(45);

    const bundle = path.join(home, 'status-runtime.env');
    const bundleKey = `svc_${'k'.repeat(40)}`;
    fs.writeFileSync(
      bundle,
      `RUNTIME_BUNDLE_ID=wrt_status1\nSVC_WORKSPACE=${stack.slug}\nSVC_WORKSPACE_API_KEY=${bundleKey}\n`,
    );
    const withBundle = await runSvc(['runtime', 'status', '--bundle', bundle, '--json'], home);
    expect(withBundle.code).toBe(0);
    expect(JSON.parse(withBundle.stdout).result.bundle).toMatchObject({
      bundle_id: 'wrt_status1',
      workspace: stack.slug,
      has_workspace_api_key: true,
      has_relay_token: false,
    });
    expect(withBundle.stdout).not.toContain(bundleKey);

    const internal = await runSvc(['internal', 'status', '--json'], home);
    expect(internal.code).toBe(0);
    expect(JSON.parse(internal.stdout).result).toMatchObject({
      runtime: { pid: runtime!.child.pid },
      local_agents: [],
    });

    const human = await runSvc(['internal', 'status'], home);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/relay\s+ready/);
    for (const output of [status, internal, human]) {
      for (const secret of secretsOf()) expect(output.stdout + output.stderr).not.toContain(secret);
    }
  });

  it('when the control API gets a body that breaks the contract or an unknown agent, then it answers problem+json with a code', async () => {
    const bad = await control.POST('/agents', {
      body: { name: 'x', argv: [], cwd: workdir, env: {} } as never,
    });
    expect(bad.response.status).toBe(400);
    expect(bad.response.headers.get('content-type')).toContain('application/problem+json');
    expect(bad.error).toMatchObject({ code: 'validation_failed', status: 400 });

    const missing = await control.DELETE('/agents/{name}', { params: { path: { name: 'nobody' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'agent_not_supervised' });
  });

  let agent: { id: string; token: string };
  let servePort: number;
  const agentSpec = () => ({
    agent_id: agent.id,
    name: 'reviewer',
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
  });

  it('when an agent is handed over, then it runs, the router serves its health route, and kill -9 restarts it', async () => {
    servePort = await freePort();
    agent = await stack.startAgent('reviewer', host.id, servePort);

    const handed = await control.POST('/agents', { body: agentSpec() });
    expect(handed.response.status).toBe(201);
    expect(handed.data!.data).toMatchObject({
      name: 'reviewer',
      agent_id: agent.id,
      state: 'running',
      restart: 'on-failure',
      restarts: 0,
    });
    expect(JSON.stringify(handed.data)).not.toContain(agent.token);
    const firstPid = handed.data!.data.pid!;

    const health = `http://127.0.0.1:${host.routerPort}/${stack.slug}/agents/${agent.id}/global/health`;
    const answer = await eventually(
      async () => {
        const res = await fetch(health);
        const body = (await res.json()) as { agent_id?: string };
        return res.status === 401 ? body : undefined;
      },
      60_000,
      'the console route reaches the agent (401 without a credential)',
      {
        describe: () =>
          `${describeRuntime()}\nagent log:\n${fs.readFileSync(agentLogFile(paths.state_dir, 'reviewer'), 'utf8')}`,
      },
    );
    expect(answer.agent_id).toBe(agent.id);
    expect(modeOf(agentLogFile(paths.state_dir, 'reviewer'))).toBe(0o600);

    // A member's call goes through (the agent got its console proxy key from the runtime), and the router's
    // activity for the route reaches the hub with the next heartbeats.
    const authorized = await fetch(health, { headers: { authorization: `Bearer ${stack.owner.token}` } });
    expect(authorized.status).toBe(200);
    await eventually(
      async () => {
        const a = (
          await stack.owner.hub.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: agent.id } } })
        ).data?.data as { console_last_activity_at?: string | null } | undefined;
        return a?.console_last_activity_at ?? undefined;
      },
      60_000,
      'the hub records the console activity the heartbeat carried',
      { describe: describeRuntime },
    );

    process.kill(firstPid, 'SIGKILL');
    const restarted = await eventually(
      async () => {
        const { data } = await control.GET('/agents/{name}', { params: { path: { name: 'reviewer' } } });
        const a = data?.data;
        return a && a.state === 'running' && a.pid !== firstPid && a.restarts === 1 ? a : undefined;
      },
      60_000,
      'the supervisor restarts the killed agent',
      { describe: describeRuntime },
    );
    expect(restarted.last_exit).toMatchObject({ signal: 'SIGKILL' });
    expect(isAlive(restarted.pid!)).toBe(true);
  });

  it('when the agent is deleted, then its process is stopped and the runtime forgets it', async () => {
    const pid = (await control.GET('/agents/{name}', { params: { path: { name: 'reviewer' } } })).data!.data
      .pid!;

    const stopped = await control.DELETE('/agents/{name}', { params: { path: { name: 'reviewer' } } });

    expect(stopped.response.status).toBe(200);
    expect(stopped.data!.data).toMatchObject({ name: 'reviewer', state: 'stopped', pid: null });
    expect(isAlive(pid)).toBe(false);
    expect((await control.GET('/agents')).data!.data).toEqual([]);
  });

  it('when an agent exits 78 (ProviderModelNotFoundError), then only its runtime home is cleared and it is restarted once', async () => {
    const home78 = agentRuntimeHome(paths.state_dir, 'stale');
    fs.mkdirSync(home78, { recursive: true });
    fs.writeFileSync(path.join(home78, 'stale-model'), 'anthropic/gone');
    const neighbour = agentRuntimeHome(paths.state_dir, 'neighbour');
    fs.mkdirSync(neighbour, { recursive: true });
    fs.writeFileSync(path.join(neighbour, 'auth.json'), '{}');
    const script = [
      "const fs = require('node:fs');",
      "const marker = require('node:path').join(process.env.AGENT_RUNTIME_HOME, 'stale-model');",
      "if (fs.existsSync(marker)) { console.error('ProviderModelNotFoundError: anthropic/gone'); process.exit(78); }",
      "console.log('started with a clean runtime home');",
      'setInterval(() => undefined, 1000);',
    ].join('\n');

    const handed = await control.POST('/agents', {
      body: {
        agent_id: 'agt_stale',
        name: 'stale',
        argv: [process.execPath, '-e', script],
        cwd: workdir,
        env: { AGENT_RUNTIME_HOME: home78 },
      },
    });
    expect(handed.response.status).toBe(201);

    const recovered = await eventually(
      async () => {
        const a = (await control.GET('/agents/{name}', { params: { path: { name: 'stale' } } })).data?.data;
        return a && a.state === 'running' && a.restarts === 1 && a.last_exit?.code === 78 ? a : undefined;
      },
      60_000,
      'the stale agent is running again after its runtime home was cleared',
      { describe: describeRuntime },
    );
    expect(fs.existsSync(path.join(home78, 'stale-model'))).toBe(false);
    expect(fs.existsSync(path.join(neighbour, 'auth.json'))).toBe(true);
    const log = await eventually(
      async () => {
        const text = fs.readFileSync(agentLogFile(paths.state_dir, 'stale'), 'utf8');
        return text.includes('started with a clean runtime home') ? text : undefined;
      },
      60_000,
      'the restarted agent writes its first line',
    );
    expect(log).toContain('ProviderModelNotFoundError');
    expect(log).toMatch(/exit 78 \(ProviderModelNotFoundError\): cleared its runtime home/);
    expect(isAlive(recovered.pid!)).toBe(true);

    // A restart with a replaced environment (as after a fresh hub start) starts a new process.
    const restarted = await control.POST('/agents/{name}/restart', {
      params: { path: { name: 'stale' } },
      body: { env: { AGENT_RUNTIME_HOME: home78, FRESH: '1' } },
    });
    expect(restarted.response.status).toBe(200);
    expect(restarted.data!.data).toMatchObject({ state: 'running', restarts: 2 });
    expect(restarted.data!.data.pid).not.toBe(recovered.pid);
    expect(isAlive(recovered.pid!)).toBe(false);
    const invalid = await control.POST('/agents/{name}/restart', {
      params: { path: { name: 'stale' } },
      body: { env: { A: 1 } } as never,
    });
    expect([invalid.response.status, invalid.error?.code]).toEqual([400, 'validation_failed']);
    await control.DELETE('/agents/{name}', { params: { path: { name: 'stale' } } });
  });

  it('when an agent keeps failing, then the back-off grows and five failures within 60 s mark it failed', async () => {
    const handed = await control.POST('/agents', {
      body: {
        agent_id: 'agt_crash',
        name: 'crasher',
        argv: [process.execPath, '-e', 'process.exit(3)'],
        cwd: workdir,
        env: {},
      },
    });
    expect(handed.response.status).toBe(201);

    const failed = await eventually(
      async () => {
        const a = (await control.GET('/agents/{name}', { params: { path: { name: 'crasher' } } })).data?.data;
        return a?.state === 'failed' ? a : undefined;
      },
      90_000,
      'the crashing agent is marked failed',
      { describe: describeRuntime },
    );
    expect(failed).toMatchObject({ restarts: 4, pid: null, last_exit: { code: 3 } });
    await control.DELETE('/agents/{name}', { params: { path: { name: 'crasher' } } });
  });

  it('when the relay crashes, then the runtime reports it not ready (as its heartbeats do) and starts it again', async () => {
    const before = (await control.GET('/status')).data!;
    const relayPid = before.relay.pid!;

    process.kill(relayPid, 'SIGKILL');
    await eventually(
      async () => {
        const s = (await control.GET('/status')).data!;
        return s.relay.ready ? undefined : s;
      },
      60_000,
      'the runtime reports the crashed relay not ready',
      { describe: describeRuntime },
    );
    const after = await eventually(
      async () => {
        const s = (await control.GET('/status')).data!;
        return s.relay.ready && s.relay.pid !== relayPid ? s : undefined;
      },
      60_000,
      'the relay is started again and ready',
      { describe: describeRuntime },
    );
    expect(after.relay.pid).not.toBeNull();
    expect(runtime!.output()).toMatch(/relay: exited \(SIGKILL\); starting it again in 1 s/);
  });

  it('when runtime up gets SIGTERM, then agents stop (and are stopped at the hub), router and relay stop, the socket goes', async () => {
    const handed = await control.POST('/agents', { body: agentSpec() });
    expect(handed.response.status).toBe(201);
    const agentPid = handed.data!.data.pid!;
    const status = (await control.GET('/status')).data!;
    const servicePids = [status.relay.pid!, status.console_router.pid!];

    runtime!.child.kill('SIGTERM');
    const code = await runtime!.exited;

    expect([code, runtime!.output().slice(-2000)]).toEqual([0, expect.stringContaining('runtime stopped')]);
    for (const pid of [agentPid, ...servicePids]) expect([pid, isAlive(pid)]).toEqual([pid, false]);
    expect(fs.existsSync(controlSocketPath(paths.state_dir))).toBe(false);
    expect(fs.existsSync(path.join(paths.state_dir, 'runtime.pid'))).toBe(false);
    expect(await stack.agentStatus(agent.id)).toBe('offline');
    for (const secret of [...secretsOf(), agent.token]) expect(runtime!.output()).not.toContain(secret);

    const after = await runSvc(['internal', 'status', '--json'], home);
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout).error).toMatchObject({
      code: 'runtime_not_running',
      fix: expect.stringContaining('svc runtime up'),
    });
  });
});
