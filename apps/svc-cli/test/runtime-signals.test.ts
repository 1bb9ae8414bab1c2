import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '@svc/testing';
import { writeAgentState } from '../src/data/agent-state';
import { controlSocketPath, createRuntimeControlClient } from '../src/data/runtime-control-client';
import type { ConfigPaths } from '../src/domain/config-paths';
import { processStartTime } from '@svc/service-kit/child-registry';
import { startSvc, stopSvc } from './support/cli';
import type { SvcProcess } from './support/cli';
import { HubStack, tempProfile } from './support/stack';

/**
 * How `svc runtime up` starts over stale files and ends: SIGINT (Ctrl-C) with `--json` prints one summary
 * document, SIGHUP (the terminal went away) stops it cleanly too.
 */
/** CPU seconds the process used so far (user + system, from /proc); undefined once it is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** CPU seconds a process used after `before`, read until it exits (or for at most 30 s). */
async function cpuUsedUntilExit(proc: SvcProcess, before: number): Promise<number> {
  let last = before;
  const deadline = Date.now() + 30_000;
  while (proc.running() && Date.now() < deadline) {
    last = cpuSeconds(proc.child.pid!) ?? last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return last - before;
}

describe('svc runtime up start and stop', () => {
  jest.setTimeout(180_000);

  let stack: HubStack;
  let home: string;
  let paths: ConfigPaths;
  let runtime: SvcProcess | undefined;

  beforeAll(async () => {
    stack = await HubStack.start('rt-signals', { projectCode: 'RT' });
    const host = await stack.registerHost('runtime-2', os.tmpdir());
    ({ home, paths } = tempProfile('svc-runtime-signals-'));
    await stack.writeProfile(paths, host.id);
  });

  afterAll(async () => {
    await stopSvc(runtime, 20_000);
    await stack?.close();
  });

  const ready = async (proc: SvcProcess) => {
    const control = createRuntimeControlClient(controlSocketPath(paths.state_dir), 3_000);
    return eventually(
      async () => {
        const { data } = await control.GET('/status');
        return data &&
          data.pid === proc.child.pid &&
          data.relay.ready &&
          data.console_router.ready &&
          data.heartbeat.last_ok_at
          ? data
          : undefined;
      },
      90_000,
      'runtime up is ready',
      { describe: proc.output },
    );
  };

  it('when a dead runtime left its pid file and socket, and an agent left local state, then runtime up starts and names the agent', async () => {
    fs.mkdirSync(paths.state_dir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(paths.state_dir, 'runtime.pid'), '999999\n', { mode: 0o600 });
    fs.writeFileSync(controlSocketPath(paths.state_dir), 'stale');
    await writeAgentState(paths.state_dir, {
      agent_id: 'agt_left',
      name: 'left-behind',
      workspace: stack.slug,
      runtime_instance_id: 'rti_x',
      argv: ['true'],
      workdir: paths.state_dir,
      serve_port: null,
      serve_public_base_url: null,
      model: null,
      capabilities: [],
      project: null,
      team_id: null,
      started_at: new Date().toISOString(),
      agent_token: 'a-token-that-must-never-be-printed-0123456789',
      agent_token_expires_at: new Date().toISOString(),
      runtime_credential: null,
    });

    runtime = startSvc(['runtime', 'up', '--json'], home);
    await ready(runtime);
    await eventually(
      async () => runtime!.output().includes('svc start --name left-behind'),
      60_000,
      'the left-behind agent is named',
    );

    runtime.child.kill('SIGINT');
    expect(await runtime.exited).toBe(0);
    expect(runtime.output()).not.toContain('a-token-that-must-never-be-printed');
  });

  it('when --json and SIGINT, then stdout is one JSON summary naming the signal and the logs went to stderr', async () => {
    let stdout = '';
    runtime = startSvc(['runtime', 'up', '--json'], home);
    runtime.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    await ready(runtime);

    runtime.child.kill('SIGINT');

    expect(await runtime.exited).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, result: { signal: 'SIGINT', stopped_agents: [] } });
    expect(runtime.output()).toContain('SIGINT: stopping the runtime');
  });

  it('when the terminal goes away (SIGHUP), then it stops cleanly and removes its socket and pid file', async () => {
    runtime = startSvc(['runtime', 'up'], home);
    await ready(runtime);

    runtime.child.kill('SIGHUP');

    expect(await runtime.exited).toBe(0);
    expect(runtime.output()).toContain('runtime stopped');
    expect(fs.existsSync(controlSocketPath(paths.state_dir))).toBe(false);
    expect(fs.existsSync(path.join(paths.state_dir, 'runtime.pid'))).toBe(false);
  });

  /** Its relay and router pids once ready, and a check of how many of them still run (zombies excluded). */
  const childrenOf = async (proc: SvcProcess) => {
    const status = await ready(proc);
    const pids = [status.relay.pid!, status.console_router.pid!];
    const running = async () =>
      (await Promise.all(pids.map(async (pid) => (await processStartTime(pid)) !== null))).filter(Boolean)
        .length;
    return { pids, running };
  };
  const exitsWithin = (proc: SvcProcess, ms: number) =>
    Promise.race([proc.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), ms))]);

  it('when its stdout is a pipe nobody reads any more and then SIGTERM comes, then it stops cleanly within its grace period without spinning', async () => {
    runtime = startSvc(['runtime', 'up'], home);
    const { running } = await childrenOf(runtime);
    // The reader goes away (a terminal closed, a launcher killed): every later write fails with EPIPE.
    runtime.child.stdout!.destroy();
    const cpuBefore = cpuSeconds(runtime.child.pid!)!;

    runtime.child.kill('SIGTERM');

    // A process looping on EPIPE burns about a CPU second per second; a clean stop takes a fraction of one.
    expect(await cpuUsedUntilExit(runtime, cpuBefore)).toBeLessThan(3);
    // Its own stop: agents, router and relay, each within the 10 s grace period, and a last heartbeat.
    expect(await exitsWithin(runtime, 25_000)).toBe(0);
    expect(await running()).toBe(0);
    expect(fs.existsSync(controlSocketPath(paths.state_dir))).toBe(false);
    expect(fs.existsSync(path.join(paths.state_dir, 'children.json'))).toBe(false);
  });

  it('when its stdout is a pipe nobody reads any more and it has something to say, then it stops as if its terminal had gone away', async () => {
    runtime = startSvc(['runtime', 'up'], home);
    const { pids, running } = await childrenOf(runtime);
    runtime.child.stdout!.destroy();

    // The relay crashes: the runtime writes that it starts it again, the write fails, and the runtime stops.
    process.kill(pids[0]!, 'SIGKILL');

    expect(await exitsWithin(runtime, 25_000)).toBe(0);
    expect(await running()).toBe(0);
    expect(fs.existsSync(path.join(paths.state_dir, 'children.json'))).toBe(false);
    expect(fs.existsSync(path.join(paths.state_dir, 'runtime.pid'))).toBe(false);
  });

  it('when runtime up was killed (SIGKILL) and left its relay and router running, then the next runtime up stops them first and runs its own', async () => {
    runtime = startSvc(['runtime', 'up'], home);
    const first = await ready(runtime);
    const left = [first.relay.pid!, first.console_router.pid!];
    // Running, not a zombie waiting for init to reap it.
    const running = async () =>
      (await Promise.all(left.map(async (pid) => (await processStartTime(pid)) !== null))).filter(Boolean)
        .length;
    runtime.child.kill('SIGKILL');
    await runtime.exited;
    // Nothing was there to stop them: they outlive the runtime, holding its ports.
    expect(await running()).toBe(2);

    runtime = startSvc(['runtime', 'up'], home);
    const second = await ready(runtime);

    expect(await running()).toBe(0);
    expect([second.relay.pid, second.console_router.pid]).not.toContain(left[0]);
    expect([second.relay.pid, second.console_router.pid]).not.toContain(left[1]);
    expect(runtime.output()).toContain(
      `stopped the relay (pid ${left[0]}) left running by a runtime that did not stop`,
    );
    expect(runtime.output()).toContain(
      `stopped the console-router (pid ${left[1]}) left running by a runtime that did not stop`,
    );
    runtime.child.kill('SIGTERM');
    expect(await runtime.exited).toBe(0);
  });
});
