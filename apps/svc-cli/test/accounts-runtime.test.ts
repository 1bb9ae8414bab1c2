import fs from 'node:fs';
import path from 'node:path';
import { createHubClient, unwrap } from '@svc/contracts';
import { eventually } from '@svc/testing';
import { readAgentState } from '../src/data/agent-state';
import { controlSocketPath, createRuntimeControlClient } from '../src/data/runtime-control-client';
import { resolveConfigPaths } from '../src/domain/config-paths';
import { assertBuilt, jsonOf, runSvc, runtimeOutputOf, startSvc, stopSvc, tempHome } from './support/cli';
import type { CliResult, SvcProcess } from './support/cli';
import { freshWorkdirRoot, HubStack } from './support/stack';
import type { StackHost } from './support/stack';

/**
 * The accounts commands against a host run by the real `svc runtime up`: doctor is green, and `token refresh`
 * restarts the supervised agent with its new AGENT_TOKEN.
 */
jest.setTimeout(240_000);

let stack: HubStack;
let host: StackHost;
let home: string;
let configDir: string;
let workdirRoot: string;
let runtime: SvcProcess | undefined;

const paths = () => resolveConfigPaths({ configDir, profile: 'default' });
const runtimeOutput = () => runtimeOutputOf(runtime);

function svc(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runSvc(args, home, {
    SVC_CONFIG_DIR: configDir,
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_AGENT_WORKDIR_ROOT: workdirRoot,
    ...env,
  });
}

function processEnv(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

beforeAll(async () => {
  assertBuilt('login', 'the accounts commands');
  stack = await HubStack.start('tokenrt', { projectCode: 'ACCT' });
  workdirRoot = freshWorkdirRoot('svc-accounts-root-');
  host = await stack.registerHost('tokenrt-host', workdirRoot);
  home = tempHome('svc-accounts-rt-');
  configDir = path.join(home, 'cfg');
  const hostEnv = { SVC_CONFIG_DIR: configDir, SVC_RUNTIME_INSTANCE_ID: host.id };
  const login = await runSvc(stack.loginArgs('--pull-runtime'), home, hostEnv, stack.password);
  if (login.code !== 0) throw new Error(`login failed: ${login.stdout}${login.stderr}`);
  runtime = startSvc(['runtime', 'up'], home, hostEnv);
  await eventually(
    async () => fs.existsSync(controlSocketPath(paths().state_dir)),
    90_000,
    'the control socket',
    { describe: runtimeOutput },
  );
  await eventually(
    async () => {
      const h = unwrap(
        await stack.participant.GET('/api/v1/runtime-hosts/{hostId}', {
          params: { path: { hostId: host.id } },
        }),
      );
      return h.readiness.spawn_ready;
    },
    90_000,
    'the host spawn ready at the hub',
    { describe: runtimeOutput },
  );
}, 240_000);

afterAll(async () => {
  await stopSvc(runtime, 30_000);
  await stack?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
  if (workdirRoot) fs.rmSync(workdirRoot, { recursive: true, force: true });
});

describe('accounts commands with svc runtime up', () => {
  it('when the runtime runs the host, then config doctor passes every check and exits 0', async () => {
    const result = await eventually(
      async () => {
        const r = await svc(['config', 'doctor', '--json']);
        return r.code === 0 ? r : undefined;
      },
      90_000,
      'a green doctor',
      { intervalMs: 250, describe: runtimeOutput },
    );

    const doc = jsonOf(result);
    expect(doc).toMatchObject({ ok: true, result: { summary: { passed: 11, warned: 0, failed: 0 } } });
    const human = await svc(['config', 'doctor']);
    expect(human.code).toBe(0);
    expect(
      human.stdout
        .trimEnd()
        .split('\n')
        .slice(0, -1)
        .every((line) => line.startsWith('✓ ')),
    ).toBe(true);
  });

  it('when the token of a supervised agent is refreshed, then the runtime restarts it with the new AGENT_TOKEN and it keeps working', async () => {
    const started = await svc([
      'start',
      '--name',
      'tok-agent',
      '--project',
      stack.projectCode,
      '--model',
      'local/echo',
      '--json',
    ]);
    expect({ code: started.code, out: started.code === 0 ? '' : started.stdout + started.stderr }).toEqual({
      code: 0,
      out: '',
    });
    const before = (await readAgentState(paths().state_dir, 'tok-agent'))!;
    const control = createRuntimeControlClient(controlSocketPath(paths().state_dir));
    const supervisedBefore = unwrap(
      await control.GET('/agents/{name}', { params: { path: { name: 'tok-agent' } } }),
    );
    expect(supervisedBefore.pid).toEqual(expect.any(Number));
    const envBefore = processEnv(supervisedBefore.pid!);
    expect(envBefore.AGENT_TOKEN).toBe(before.agent_token);
    const refreshedAt = Date.now();

    const result = await svc(['token', 'refresh', '--name', 'tok-agent', '--json']);

    expect(result.code).toBe(0);
    const after = (await readAgentState(paths().state_dir, 'tok-agent'))!;
    expect(after.agent_token).not.toBe(before.agent_token);
    const doc = jsonOf(result);
    expect(doc).toMatchObject({
      ok: true,
      result: { name: 'tok-agent', agent_id: before.agent_id, supervised: true, restarted: true },
    });
    const pid = (doc.result as { pid: number }).pid;
    expect(pid).not.toBe(supervisedBefore.pid);
    expect(result.stdout).not.toContain(after.agent_token);
    // Same environment as before, but the new token.
    const envAfter = processEnv(pid);
    expect(envAfter.AGENT_TOKEN).toBe(after.agent_token);
    const { AGENT_TOKEN: _old, ...restBefore } = envBefore;
    const { AGENT_TOKEN: _new, ...restAfter } = envAfter;
    expect(restAfter).toEqual(restBefore);
    // The restarted process heartbeats with the new token.
    const asOwner = createHubClient({ baseUrl: stack.hubUrl, token: stack.owner.token });
    await eventually(
      async () => {
        const agent = unwrap(
          await asOwner.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: before.agent_id } } }),
        );
        return agent.last_heartbeat_at !== null && Date.parse(agent.last_heartbeat_at) > refreshedAt;
      },
      90_000,
      'a heartbeat after the restart',
      { describe: runtimeOutput },
    );
    expect((await svc(['token', 'health', '--name', 'tok-agent'])).code).toBe(0);
  });
});
