import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { eventually } from '@svc/testing';
import { resolveConfigPaths } from '../src/domain/config-paths';
import { runSvc, runtimeOutputOf, startSvc, stopSvc, tempHome } from './support/cli';
import type { SvcProcess } from './support/cli';
import { HubStack } from './support/stack';
import type { StackHost } from './support/stack';
import type { ListAgentsResult } from '../src/use-cases/agents/list-agents';

/**
 * The relay's `POST /spawn` end to end: the hub, `svc runtime up` (relay, console router, supervisor) and the
 * real `svc start` the relay runs as its child. Tokens, idempotency on the spawn id, concurrency, the command
 * allow-list, DNS rebinding, a start that hangs past the timeout, and the relay's secrets kept from the child.
 */
jest.setTimeout(300_000);

let stack: HubStack;
let host: StackHost;
let home: string;
let configDir: string;
let runtime: SvcProcess | undefined;
let relayToken: string;
let apiKey: string;

type ListResult = { result: ListAgentsResult };

/** A file of /proc/<pid>; undefined when the process is gone. */
function readProc(pid: string, file: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Pids of the processes whose command line contains every one of `parts`. */
function processesNaming(...parts: string[]): string[] {
  return fs
    .readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      const cmdline = readProc(pid, 'cmdline');
      return cmdline !== undefined && parts.every((part) => cmdline.includes(part));
    });
}

const paths = () => resolveConfigPaths({ configDir, profile: 'default' });
const relayUrl = () => `http://127.0.0.1:${host.relayPort}`;
const runtimeOutput = () => runtimeOutputOf(runtime);

/** The host's allow-list: svc's own agent, and a program that never listens on its serve port (`svc start` waits for it). */
const COMMANDS = JSON.stringify({
  default: null,
  sleeper: `${JSON.stringify(process.execPath)} -e "setInterval(() => {}, 1000)"`,
});

async function startRuntime(extra: Record<string, string> = {}): Promise<void> {
  runtime = startSvc(['runtime', 'up'], home, {
    SVC_CONFIG_DIR: configDir,
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_RELAY_COMMANDS: COMMANDS,
    // A variable the relay has and must not hand to `svc start`: only allow-listed ones pass.
    UNRELATED_SECRET: 'unrelated-secret-value-0123456789',
    ...extra,
  });
  await eventually(
    async () => {
      const ready = await fetch(`${relayUrl()}/readyz`).catch(() => undefined);
      if (ready?.status !== 200) return undefined;
      return await stack.spawnReady(host.id);
    },
    90_000,
    'the relay ready and the host spawn ready at the hub',
    { describe: runtimeOutput },
  );
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function spawn(
  body: unknown,
  headers: Record<string, string> = { 'x-svc-relay-token': relayToken },
): Promise<Answer> {
  const res = await fetch(`${relayUrl()}/spawn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A request with its own `Host` header (fetch does not let a caller set it). */
function withHost(hostHeader: string, method: string, route: string, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: host.relayPort,
        method,
        path: route,
        headers: { host: hostHeader, 'content-type': 'application/json', 'x-svc-relay-token': relayToken },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
        );
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? JSON.stringify(body) : undefined);
  });
}

/** A problem answer without its request id (each answer has its own). */
const sameAnswer = ({ status, body }: Answer) => {
  const { request_id: _requestId, ...rest } = body;
  return { status, body: rest };
};

/** Repeats a spawn while the relay answers 202, as the hub does. */
function spawnUntilDone(body: unknown): Promise<Answer> {
  return eventually(
    async () => {
      const answer = await spawn(body);
      return answer.status !== 202 && answer;
    },
    120_000,
    'an answer other than 202',
    { intervalMs: 500, describe: runtimeOutput },
  );
}

async function relayStatus(): Promise<{ spawns: Record<string, number>; spawn_enabled: boolean }> {
  return (await (await fetch(`${relayUrl()}/status`)).json()) as never;
}

const agentBody = (spawnId: string, name: string, extra: Record<string, unknown> = {}) => ({
  spawn_id: spawnId,
  agent: { name, model: 'local/echo', capabilities: ['review'], project: 'SP', serve: true, ...extra },
});

beforeAll(async () => {
  stack = await HubStack.start('spawn');
  host = await stack.registerHost('spawn-host');
  await stack.owner.createProject('SP');
  home = tempHome('svc-spawn-home-');
  configDir = path.join(home, 'config');
  const login = await runSvc(
    stack.loginArgs('--pull-runtime', '--json'),
    home,
    { SVC_CONFIG_DIR: configDir },
    `${stack.password}\n`,
  );
  if (login.code !== 0) throw new Error(`login failed: ${login.stdout}${login.stderr}`);
  const secrets = Object.fromEntries(
    fs
      .readFileSync(paths().runtime_env_path, 'utf8')
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  relayToken = secrets.SVC_RELAY_TOKEN!;
  apiKey = secrets.SVC_WORKSPACE_API_KEY!;
  expect(relayToken.length).toBeGreaterThanOrEqual(32);
  await startRuntime();
}, 240_000);

afterAll(async () => {
  await stopSvc(runtime, 30_000);
  await stack?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
  if (host) fs.rmSync(host.workdirRoot, { recursive: true, force: true });
});

describe('relay spawn', () => {
  it('when the token is missing or wrong, or Host is not the relay, then the spawn is refused before anything runs', async () => {
    const body = agentBody('spw_refused0001', 'refused');
    const missing = await spawn(body, {});
    expect(missing).toMatchObject({ status: 401, body: { code: 'relay_token_missing' } });
    const wrong = await spawn(body, { 'x-svc-relay-token': `${relayToken.slice(0, -1)}x` });
    expect(wrong).toMatchObject({ status: 403, body: { code: 'relay_token_invalid' } });
    // A page on another site that resolves its own name to 127.0.0.1 (DNS rebinding) still sends its Host.
    for (const route of ['/spawn', '/status']) {
      const res = await withHost('attacker.example.test', route === '/spawn' ? 'POST' : 'GET', route, body);
      expect(res).toMatchObject({ status: 403, body: { code: 'host_not_allowed' } });
    }
    // A body that is an argv string, or has fields the contract does not know, is a validation error.
    const argv = await spawn({ spawn_id: 'spw_refused0002', command: 'rm -rf /' });
    expect(argv.status).toBe(400);
    expect((await relayStatus()).spawns).toEqual({ requested: 0, in_flight: 0, started: 0, failed: 0 });
    expect(await stack.agents()).toEqual([]);
    for (const answer of [missing, wrong, argv])
      expect(JSON.stringify(answer.body)).not.toContain(relayToken);
  });

  let agentId: string;

  it('when the right token asks for an agent, then svc start runs it: online at the hub with one relay runtime credential, and the relay counts it', async () => {
    const answer = await spawnUntilDone(agentBody('spw_first000001', 'spawned-one'));
    if (answer.status !== 200) throw new Error(`${JSON.stringify(answer.body)}\n${runtimeOutput()}`);
    expect(answer.body).toMatchObject({
      spawn_id: 'spw_first000001',
      state: 'started',
      name: 'spawned-one',
      runtime_instance_id: host.id,
      pid: expect.any(Number),
      serve_port: expect.any(Number),
    });
    agentId = answer.body.agent_id as string;
    expect(await stack.agent(agentId)).toMatchObject({
      status: expect.stringMatching(/^(online|idle|busy)$/),
      runtime_instance_id: host.id,
    });
    const issued = await stack.audit({ action: 'credential.runtime.issued', target_id: agentId });
    expect(issued).toHaveLength(1);
    expect(issued[0]!.data).toMatchObject({ launch_path: 'relay', spawn_id: 'spw_first000001' });
    expect((await relayStatus()).spawns).toMatchObject({ requested: 1, started: 1, failed: 0, in_flight: 0 });
    // The relay reported the spawn to the hub's audit, with its id.
    const reported = (await stack.audit())
      .filter((e) => e.action.startsWith('relay.spawn.'))
      .map((e) => [e.action, (e.data as { spawn_id?: string }).spawn_id]);
    expect(reported).toEqual(
      expect.arrayContaining([
        ['relay.spawn.requested', 'spw_first000001'],
        ['relay.spawn.started', 'spw_first000001'],
      ]),
    );
  });

  it('when the same spawn id comes again, then the same outcome is answered without a second start; with another body it is a conflict', async () => {
    const again = await spawnUntilDone(agentBody('spw_first000001', 'spawned-one'));
    expect(again.status).toBe(200);
    expect(again.body.agent_id).toBe(agentId);
    const changed = await spawn(agentBody('spw_first000001', 'spawned-one', { capabilities: ['build'] }));
    expect(changed).toMatchObject({ status: 409, body: { code: 'spawn_id_conflict' } });
    expect(await stack.audit({ action: 'credential.runtime.issued', target_id: agentId })).toHaveLength(1);
    expect((await relayStatus()).spawns).toMatchObject({ requested: 1, started: 1 });
  });

  it('when two spawns of one name arrive together, then only one starts it; the same id twice at once gets one outcome', async () => {
    const [a, b] = await Promise.all([
      spawn(agentBody('spw_racea00001', 'racer')),
      spawn(agentBody('spw_raceb00001', 'racer')),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses[1]).toBe(409);
    const loser = a.status === 409 ? a : b;
    expect(loser.body.code).toBe('spawn_in_progress');
    const winnerId = a.status === 409 ? 'spw_raceb00001' : 'spw_racea00001';
    const [c, d] = await Promise.all([
      spawnUntilDone(agentBody(winnerId, 'racer')),
      spawnUntilDone(agentBody(winnerId, 'racer')),
    ]);
    expect(c.status).toBe(200);
    expect(d).toEqual(c);
    const racers = (await stack.agents()).filter((agent) => agent.name === 'racer');
    expect(racers).toHaveLength(1);
    expect(await stack.audit({ action: 'credential.runtime.issued', target_id: racers[0]!.id })).toHaveLength(
      1,
    );
  });

  it('when the command key is not in the allow-list, then 422 command_not_allowed, and the same id answers the same', async () => {
    const body = { ...agentBody('spw_badcmd0001', 'badcmd'), command_key: 'shell' };
    const first = await spawn(body);
    expect(first).toMatchObject({
      status: 422,
      body: { code: 'command_not_allowed', spawn_id: 'spw_badcmd0001' },
    });
    expect(sameAnswer(await spawn(body))).toEqual(sameAnswer(first));
    expect((await stack.agents()).map((a) => a.name)).not.toContain('badcmd');
  });

  it('when a direct start rule is broken, then the relay answers start_rule_violated with the rule', async () => {
    const answer = await spawnUntilDone(agentBody('spw_rule5000001', 'ruleless', { project: undefined }));
    expect(answer).toMatchObject({ status: 422, body: { code: 'start_rule_violated', rule: 5 } });
  });

  it('when every spawn so far is looked at, then the spawn log has each request, and no log holds a relay secret', async () => {
    const log = path.join(paths().state_dir, 'relay-spawns.jsonl');
    expect(fs.statSync(log).mode & 0o777).toBe(0o600);
    const lines = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { spawn_id: string; event: string });
    expect(lines.filter((l) => l.event === 'requested').map((l) => l.spawn_id)).toEqual(
      expect.arrayContaining(['spw_first000001', 'spw_badcmd0001']),
    );
    for (const file of fs.readdirSync(paths().state_dir, { recursive: true }) as string[]) {
      const full = path.join(paths().state_dir, file);
      if (!fs.statSync(full).isFile() || !/\.(log|jsonl)$/.test(full)) continue;
      const text = fs.readFileSync(full, 'utf8');
      expect(text).not.toContain(relayToken);
      expect(text).not.toContain(apiKey);
    }
    expect(runtime!.output()).not.toContain(relayToken);
  });
});

describe('relay spawn that hangs', () => {
  beforeAll(async () => {
    await stopSvc(runtime, 30_000);
    await startRuntime({ SVC_RELAY_START_TIMEOUT_MS: '4000', SVC_RELAY_STOP_GRACE_MS: '500' });
  }, 180_000);

  it('when svc start does not finish within the start timeout, then it is stopped and spawn_timeout is answered; its environment never had the relay secrets', async () => {
    const body = { ...agentBody('spw_hang000001', 'sleeper'), command_key: 'sleeper' };
    const pending = spawnUntilDone(body);
    // While it runs: the `svc start` child's environment, as the kernel has it.
    const environ = await eventually(
      async () => {
        const [pid] = processesNaming('spw_hang000001', '\0start\0');
        return pid === undefined ? undefined : readProc(pid, 'environ');
      },
      20_000,
      'the svc start process of the spawn',
      { describe: runtimeOutput },
    );
    const names = environ.split('\0').map((entry) => entry.slice(0, entry.indexOf('=')));
    expect(names).toContain('SVC_RUNTIME_INSTANCE_ID');
    expect(names).not.toContain('SVC_RELAY_TOKEN');
    expect(names).not.toContain('SVC_WORKSPACE_API_KEY');
    expect(names).not.toContain('UNRELATED_SECRET');
    expect(environ).not.toContain(relayToken);
    expect(environ).not.toContain(apiKey);

    const answer = await pending;
    expect(answer).toMatchObject({
      status: 504,
      body: { code: 'spawn_timeout', spawn_id: 'spw_hang000001' },
    });
    // Stopped: no svc start of the spawn is left, and the agent does not stay supervised.
    expect(processesNaming('spw_hang000001')).toEqual([]);
    const listed = await runSvc(['list', '--json'], home, {
      SVC_CONFIG_DIR: configDir,
      SVC_RUNTIME_INSTANCE_ID: host.id,
    });
    const agents = (JSON.parse(listed.stdout) as ListResult).result.agents;
    const supervised = agents.filter(
      (a) => a.name === 'sleeper' && a.process !== null && a.process.state !== 'stopped',
    );
    expect(supervised).toEqual([]);
    expect((await relayStatus()).spawns).toMatchObject({ requested: 1, failed: 1 });
    const failed = (await stack.audit()).filter(
      (e) =>
        e.action === 'relay.spawn.failed' && (e.data as { spawn_id?: string }).spawn_id === 'spw_hang000001',
    );
    expect(failed).toHaveLength(1);
  });
});
