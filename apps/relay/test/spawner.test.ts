import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError, createLogger } from '@svc/service-kit';
import { eventually } from '@svc/testing';
import { HubSpawnEvents } from '../src/data/hub-spawn-events';
import { SpawnLog } from '../src/data/spawn-log';
import { drainMarker } from '../src/data/drain-marker';
import { isAllowedHost } from '../src/domain/host-guard';
import { childEnvironment, outcomeOfStart, spawnArgv } from '../src/domain/spawn-command';
import { AgentSpawner } from '../src/use-cases/spawn/spawn-agent';
import type { SpawnSettings } from '../src/use-cases/spawn/spawn-agent';

/**
 * The spawner with a stand-in for svc: a script that prints the JSON envelope `svc start --json` prints (the
 * real svc runs in apps/svc-cli/test/relay-spawn.test.ts). Here: idempotency, the log across a restart, the
 * mapping of svc's answers, the host guard and the child's environment.
 */
const logger = createLogger({ name: 'relay-test', level: 'silent' });
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-spawner-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A stand-in svc: `start` prints an ok envelope naming the agent (or fails when the name says so). */
function fakeSvc(): string {
  const file = path.join(dir, 'svc.js');
  fs.writeFileSync(
    file,
    `const args = process.argv.slice(2);
const name = args[args.indexOf('--name') + 1];
if (name === 'slow') setTimeout(() => {}, 60000);
else if (name === 'broken') { console.log(JSON.stringify({ ok: false, error: { code: 'workdir_outside_root', message: '--workdir /x is outside (direct start rule 5)', exit_code: 1 } })); process.exit(1); }
else console.log(JSON.stringify({ ok: true, result: { agent_id: 'agt_' + name, name, pid: 4242, serve_port: null, runtime_instance_id: 'rti_test', console_url: null } }));`,
  );
  return file;
}

function spawner(settings: Partial<SpawnSettings> = {}): AgentSpawner {
  return new AgentSpawner({
    settings: {
      svc: { nodePath: process.execPath, svcEntry: fakeSvc(), configDir: undefined, profile: undefined },
      commands: { default: null },
      childEnvKeep: [],
      startTimeoutMs: 10_000,
      stopGraceMs: 100,
      waitMs: 5_000,
      missingSettings: () => [],
      draining: () => false,
      ...settings,
    },
    log: new SpawnLog(path.join(dir, 'spawns.jsonl')),
    events: new HubSpawnEvents({
      hubUrl: undefined,
      apiKey: undefined,
      runtimeInstanceId: undefined,
      logger,
    }),
    logger,
    env: { PATH: process.env.PATH, SVC_RELAY_TOKEN: 'x'.repeat(40) },
    now: () => new Date(),
  });
}

const request = (spawnId: string, name: string) => ({
  spawn_id: spawnId,
  command_key: 'default',
  agent: { name, serve: false, worker: false },
});

async function problemOf(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a problem');
}

describe('relay spawner', () => {
  test('when a spawn id is repeated after the relay restarts, then the logged outcome is answered without running svc again', async () => {
    const first = spawner();
    const answer = await first.spawn(request('spw_restart001', 'alpha'));
    expect(answer).toMatchObject({ status: 200, body: { agent_id: 'agt_alpha', state: 'started' } });
    fs.rmSync(path.join(dir, 'svc.js'));

    const second = spawner({ svc: undefined });
    expect(await second.spawn(request('spw_restart001', 'alpha'))).toEqual(answer);
    const conflict = await problemOf(
      second.spawn({ ...request('spw_restart001', 'alpha'), command_key: 'x' }),
    );
    expect(conflict.code).toBe('spawn_id_conflict');
    expect(second.counts).toEqual({ requested: 0, started: 0, failed: 0 });
  });

  test('when the relay stopped while a spawn was in flight, then that spawn id answers spawn_interrupted', async () => {
    const log = new SpawnLog(path.join(dir, 'spawns.jsonl'));
    log.append({ spawn_id: 'spw_cutoff0001', event: 'requested', request_sha256: 'abc', agent_name: 'beta' });
    const restarted = spawner();
    const lines = log.read();
    expect(lines.at(-1)).toMatchObject({
      spawn_id: 'spw_cutoff0001',
      event: 'failed',
      code: 'spawn_interrupted',
    });
    expect(fs.statSync(path.join(dir, 'spawns.jsonl')).mode & 0o777).toBe(0o600);
    expect(restarted.counts.requested).toBe(0);
  });

  test('when the spawn outlives the wait, then 202 in_progress is answered and a repeat gets the outcome', async () => {
    const s = spawner({ waitMs: 0, startTimeoutMs: 300 });
    const first = await s.spawn(request('spw_slow000001', 'slow'));
    expect(first).toMatchObject({ status: 202, body: { state: 'in_progress', spawn_id: 'spw_slow000001' } });
    expect(s.inFlight).toBe(1);
    const other = await problemOf(s.spawn(request('spw_slow000002', 'slow')));
    expect(other).toMatchObject({ status: 409, code: 'spawn_in_progress' });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const timedOut = await problemOf(s.spawn(request('spw_slow000001', 'slow')));
    expect(timedOut).toMatchObject({ status: 504, code: 'spawn_timeout' });
    expect(s.counts).toEqual({ requested: 1, started: 0, failed: 1 });
  });

  test('when the relay stops with a spawn in flight, then its svc start is stopped and the spawn fails', async () => {
    const s = spawner({ waitMs: 0, startTimeoutMs: 60_000 });
    expect(await s.spawn(request('spw_stopped001', 'slow'))).toMatchObject({ status: 202 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await s.stopInFlight();
    expect(Date.now() - started).toBeLessThan(2_000);
    // Asked again as the hub does while it answers 202 (problemOf throws then), until the problem comes.
    const failed = await eventually(
      () => problemOf(s.spawn(request('spw_stopped001', 'slow'))),
      20_000,
      'the stopped spawn to fail',
      { intervalMs: 50 },
    );
    expect(failed).toMatchObject({ status: 502, code: 'spawn_failed' });
    expect(s.inFlight).toBe(0);
  });

  test('when svc refuses a start rule, then start_rule_violated names the rule and svc code', async () => {
    const refused = await problemOf(spawner().spawn(request('spw_broken0001', 'broken')));
    expect(refused).toMatchObject({ status: 422, code: 'start_rule_violated' });
    expect(refused.extra).toMatchObject({ rule: 5, cli_code: 'workdir_outside_root', exit_code: 1 });
  });

  test('when the host lacks its settings, then host_not_spawn_ready, and the spawn id stays free for a retry', async () => {
    let missing = ['SVC_HUB_URL'];
    const s = spawner({ missingSettings: () => missing });
    const notReady = await problemOf(s.spawn(request('spw_notready01', 'gamma')));
    expect(notReady).toMatchObject({ status: 503, code: 'host_not_spawn_ready' });
    missing = [];
    expect(await s.spawn(request('spw_notready01', 'gamma'))).toMatchObject({ status: 200 });
  });

  test('when the host drains, then a new spawn is runtime_host_draining, a known spawn id still answers, and the spawn id stays free', async () => {
    const marker = path.join(dir, 'draining');
    const s = spawner({ draining: drainMarker(marker) });
    expect(await s.spawn(request('spw_before0001', 'delta'))).toMatchObject({ status: 200 });
    fs.writeFileSync(marker, '');
    const refused = await problemOf(s.spawn(request('spw_drain00001', 'epsilon')));
    expect(refused).toMatchObject({ status: 409, code: 'runtime_host_draining' });
    expect(await s.spawn(request('spw_before0001', 'delta'))).toMatchObject({ status: 200 });
    fs.rmSync(marker);
    expect(await s.spawn(request('spw_drain00001', 'epsilon'))).toMatchObject({ status: 200 });
  });
});

describe('svc start outcomes', () => {
  const now = new Date('2026-11-24T00:00:00Z');
  test('when svc says the host is not spawn ready, or fails otherwise, then 503 or 502', () => {
    const notReady = outcomeOfStart({
      spawnId: 's',
      exitCode: 1,
      stdout: '{"ok":false,"error":{"code":"runtime_not_running","message":"x (direct start rule 6)"}}',
      now,
    });
    expect(notReady).toMatchObject({
      ok: false,
      status: 503,
      problem: { code: 'host_not_spawn_ready', rule: 6 },
    });
    expect(outcomeOfStart({ spawnId: 's', exitCode: 1, stdout: 'garbage', now })).toMatchObject({
      status: 502,
      problem: { code: 'spawn_failed', cli_code: null },
    });
  });
});

describe('host guard', () => {
  test.each([
    ['127.0.0.1:8787', true],
    ['localhost', true],
    ['[::1]:8787', true],
    ['relay.example.test', true],
    ['relay.example.test:443', true],
    ['attacker.example.test', false],
    ['127.0.0.1.nip.io', false],
    [undefined, false],
    ['[::1', false],
  ])('when Host is %s, then allowed is %s', (host, allowed) => {
    expect(isAllowedHost(host, ['relay.example.test'])).toBe(allowed);
  });
});

describe('spawned process', () => {
  test('when the environment is built, then only allow-listed variables pass, never the relay token or API key', () => {
    const env = childEnvironment(
      {
        PATH: '/bin',
        HOME: '/home/svc',
        SVC_RELAY_TOKEN: 'token',
        SVC_WORKSPACE_API_KEY: 'key',
        AWS_SECRET_ACCESS_KEY: 'aws',
        EXTRA_SETTING: 'kept',
        SVC_RUNTIME_INSTANCE_ID: 'rti_x',
      },
      ['EXTRA_SETTING', 'SVC_RELAY_TOKEN'],
    );
    expect(env).toEqual({
      PATH: '/bin',
      HOME: '/home/svc',
      EXTRA_SETTING: 'kept',
      SVC_RUNTIME_INSTANCE_ID: 'rti_x',
    });
  });

  test('when the argv is built, then each value is its own argument and the command comes from the allow-list', () => {
    const argv = spawnArgv(
      { nodePath: '/node', svcEntry: '/svc/bin/run.js', configDir: '/etc/svc', profile: 'prod' },
      {
        spawn_id: 'spw_argv000001',
        command_key: 'default',
        agent: { name: 'a', project: 'WEB; rm -rf /', capabilities: ['x', 'y'], serve: true, worker: false },
      },
      'node agent.js',
    );
    expect(argv).toEqual([
      '/node',
      '/svc/bin/run.js',
      'start',
      '--name',
      'a',
      '--capabilities',
      'x,y',
      '--project',
      'WEB; rm -rf /',
      '--serve',
      '--command',
      'node agent.js',
      '--spawn-id',
      'spw_argv000001',
      '--json',
      '--config-dir',
      '/etc/svc',
      '--profile',
      'prod',
    ]);
  });
});
