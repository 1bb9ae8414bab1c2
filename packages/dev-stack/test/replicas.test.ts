import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  devStackSettings,
  eventually,
  exitWithin,
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

afterAll(async () => {
  await removeDevStack(settings, stack);
});

describe('pnpm start --replicas 2', () => {
  test('when a replica is killed, then the others answer behind HAProxy, it is started again, and a stop stops all', async () => {
    stack = await startDevStack({ ...settings.env, SVC_DEV_REPLICAS: '2' }, 180_000);
    const file = JSON.parse(readFileSync(path.join(stateDir, 'dev-stack.json'), 'utf8')) as DevStackFile;
    const front = /haproxy in front of 2 hubs \(ports (\d+), (\d+)\) and 2 Workflow APIs/.exec(
      stack.stdout(),
    );
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
