import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChildRegistry, processStartTime, stopLeftoverChildren } from './child-registry';

/** A real process in its own group, as the runtime spawns its children; it ignores nothing. */
function sleeper(): ChildProcess {
  return spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
}

const exited = (child: ChildProcess) =>
  new Promise<string | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (_code, signal) => resolve(signal));
  });

describe('the children registry of a supervisor', () => {
  let dir: string;
  let file: string;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-children-'));
    file = path.join(dir, 'children.json');
  });

  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('when children are recorded and the runtime dies, then the next start stops each one still running and removes the file', async () => {
    const registry = new ChildRegistry(file);
    const relay = sleeper();
    const agent = sleeper();
    children.push(relay, agent);
    await registry.add('relay', relay.pid!);
    await registry.add('agent a', agent.pid!);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual([
      { name: 'relay', pid: relay.pid, started: expect.any(String) },
      { name: 'agent a', pid: agent.pid, started: expect.any(String) },
    ]);

    const lines: string[] = [];
    await stopLeftoverChildren(file, 5_000, (line) => lines.push(line));

    expect(await exited(relay)).toBe('SIGTERM');
    expect(await exited(agent)).toBe('SIGTERM');
    expect(lines).toEqual([
      `stopped the relay (pid ${relay.pid}) left running by a runtime that did not stop`,
      `stopped the agent a (pid ${agent.pid}) left running by a runtime that did not stop`,
    ]);
    expect(fs.existsSync(file)).toBe(false);
  });

  test('when children are added at once, then the file keeps the order they were spawned in, whichever start time is read first', async () => {
    const registry = new ChildRegistry(file);
    const spawned = Array.from({ length: 6 }, () => sleeper());
    children.push(...spawned);
    // Added together, as a supervisor starting several services in parallel does.
    await Promise.all(spawned.map((child, i) => registry.add(`service ${i}`, child.pid!)));
    const recorded = JSON.parse(fs.readFileSync(file, 'utf8')) as Array<{ name: string; pid: number }>;
    expect(recorded.map((c) => c.name)).toEqual(spawned.map((_, i) => `service ${i}`));
    expect(recorded.map((c) => c.pid)).toEqual(spawned.map((c) => c.pid));
  });

  test('when they must stop last first, then each gets SIGTERM only after the one started after it has exited, and the line names who left them', async () => {
    const registry = new ChildRegistry(file);
    const hub = sleeper();
    const runtime = sleeper();
    children.push(hub, runtime);
    await registry.add('hub-api', hub.pid!);
    await registry.add('svc-runtime', runtime.pid!);
    const order: string[] = [];
    void exited(hub).then(() => order.push('hub-api'));
    void exited(runtime).then(() => order.push('svc-runtime'));

    const lines: string[] = [];
    await stopLeftoverChildren(file, 5_000, (line) => lines.push(line), {
      by: 'a development stack',
      order: 'last-first',
    });

    await Promise.all([exited(hub), exited(runtime)]);
    expect(order).toEqual(['svc-runtime', 'hub-api']);
    expect(lines).toEqual([
      `stopped the svc-runtime (pid ${runtime.pid}) left running by a development stack that did not stop`,
      `stopped the hub-api (pid ${hub.pid}) left running by a development stack that did not stop`,
    ]);
    expect(fs.existsSync(file)).toBe(false);
  });

  test('when a recorded pid now belongs to another process (its start time differs), then it is left alone', async () => {
    const other = sleeper();
    children.push(other);
    fs.writeFileSync(file, JSON.stringify([{ name: 'relay', pid: other.pid, started: 'another start' }]));
    const lines: string[] = [];

    await stopLeftoverChildren(file, 1_000, (line) => lines.push(line));

    expect(lines).toEqual([]);
    expect(await processStartTime(other.pid!)).not.toBeNull();
    expect(fs.existsSync(file)).toBe(false);
  });

  test('when a child exits, then it is no longer recorded; a clean stop removes the file', async () => {
    const registry = new ChildRegistry(file);
    const child = sleeper();
    children.push(child);
    await registry.add('relay', child.pid!);
    await registry.remove(child.pid!);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual([]);
    await registry.clear();
    expect(fs.existsSync(file)).toBe(false);
  });

  test('when the file is not a list of children, then nothing is signalled and it is removed', async () => {
    for (const text of ['not json', '{"pid": 1}', JSON.stringify([{ name: 'init', pid: 1, started: 'x' }])]) {
      fs.writeFileSync(file, text);
      const lines: string[] = [];
      await stopLeftoverChildren(file, 1_000, (line) => lines.push(line));
      expect(lines).toEqual([]);
      expect(fs.existsSync(file)).toBe(false);
    }
  });

  test('when a process is gone, then it has no start time', async () => {
    const child = sleeper();
    const started = await processStartTime(child.pid!);
    expect(started).toMatch(/\S/);
    child.kill('SIGKILL');
    await exited(child);
    expect(await processStartTime(child.pid!)).toBeNull();
  });
});
