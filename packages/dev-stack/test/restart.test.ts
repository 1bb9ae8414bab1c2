import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processStartTime } from '@svc/service-kit/child-registry';
import { devStackSettings, eventually, exitWithin, removeDevStack, startDevStack } from '@svc/testing';
import type { DevStackSettings, NodeProcess } from '@svc/testing';
import type { DevStackFile } from '../src/state';

/**
 * Restarting the development stack at once, however the previous one ended: Ctrl-C (even after the host's
 * runtime key was revoked), kill -9, or its terminal gone (stdout closed). Every start runs the real stack.
 */
jest.setTimeout(600_000);

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-restart-'));
let settings: DevStackSettings;
let stack: NodeProcess | undefined;

beforeAll(async () => {
  settings = await devStackSettings('devrestart', stateDir);
});

afterAll(async () => {
  await removeDevStack(settings, stack);
});

const readFile = () =>
  JSON.parse(readFileSync(path.join(stateDir, 'dev-stack.json'), 'utf8')) as DevStackFile;

/** The services the stack runs, as it recorded them (name, pid and start time). */
const recordedChildren = () =>
  JSON.parse(readFileSync(path.join(stateDir, 'children.json'), 'utf8')) as Array<{
    name: string;
    pid: number;
    started: string;
  }>;

/** The recorded processes that still run (a pid given to another process since does not count). */
async function stillRunning(children: Array<{ name: string; pid: number; started: string }>) {
  const out: string[] = [];
  for (const child of children) {
    if ((await processStartTime(child.pid)) === child.started) out.push(`${child.name} (pid ${child.pid})`);
  }
  return out;
}

const hubAs = async (file: DevStackFile, route: string, init: RequestInit = {}) => {
  const res = await fetch(`${file.hub_url}${route}`, {
    ...init,
    headers: { authorization: `Bearer ${file.participant.token}`, ...init.headers },
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
};

test('when the host runtime key was revoked and the stack gets Ctrl-C, then its agent is marked stopped as the participant and an immediate start works', async () => {
  stack = await startDevStack(settings.env, 180_000);
  const first = readFile();
  // Revoke the key `svc runtime up` and `svc stop` use (as a leaked key is revoked, or another pull did).
  const runtimeEnv = readFileSync(path.join(stateDir, 'cli', 'profiles', 'default.runtime.env'), 'utf8');
  const key = /^SVC_WORKSPACE_API_KEY=(\S+)$/m.exec(runtimeEnv)![1]!;
  const keys = await hubAs(first, `/api/v1/workspaces/${first.workspace.slug}/api-keys`);
  const runtimeKey = (keys.body!.data as Array<{ id: string; prefix: string }>).find((k) =>
    key.startsWith(`svc_${k.prefix}_`),
  )!;
  const revoked = await hubAs(first, `/api/v1/workspaces/${first.workspace.slug}/api-keys/${runtimeKey.id}`, {
    method: 'DELETE',
  });
  expect(revoked.status).toBeLessThan(300);

  stack.child.kill('SIGINT');
  expect(await exitWithin(stack, 90_000)).not.toBe('timeout');
  expect(stack.stdout()).toContain('dev-console-agent marked offline at the hub as the participant');

  // At once: no wait for the agent's heartbeat to go stale.
  stack = await startDevStack(settings.env, 180_000);
  const second = readFile();
  expect(second.agent.id).toBe(first.agent.id);
  const agent = await hubAs(second, `/api/v1/agents/${second.agent.id}`);
  expect((agent.body!.data as { status: string }).status).not.toBe('offline');

  // And a plain Ctrl-C, then a start at once, again.
  stack.child.kill('SIGINT');
  expect(await exitWithin(stack, 90_000)).toBe(0);
  expect(existsSync(path.join(stateDir, 'children.json'))).toBe(false);
  stack = await startDevStack(settings.env, 180_000);
});

test('when the stack is killed with kill -9, then its services are left running and the next start stops them and starts', async () => {
  const left = recordedChildren();
  expect(left.map((c) => c.name)).toEqual([
    'hub-api',
    'workflow-api',
    'workflow-worker',
    'svc-runtime',
    'control-web',
  ]);
  stack!.child.kill('SIGKILL');
  await stack!.exited;
  expect(await stillRunning(left)).toHaveLength(5);

  stack = await startDevStack(settings.env, 240_000);

  expect(await stillRunning(left)).toEqual([]);
  expect(stack.stdout()).toContain(
    `stopped the svc-runtime (pid ${left.find((c) => c.name === 'svc-runtime')!.pid}) left running by a development stack that did not stop`,
  );
  const file = readFile();
  expect((await fetch(`${file.hub_url}/readyz`)).status).toBe(200);
});

test('when the terminal of the stack goes away (its stdout closed), then it stops every service within the grace period', async () => {
  const children = recordedChildren();
  const running = stack!;
  // The reader of its stdout goes away; the stack's next line (its services log all the time) fails.
  running.child.stdout!.destroy();

  expect(await exitWithin(running, 90_000)).toBe(0);
  await eventually(
    async () => (await stillRunning(children)).length === 0,
    10_000,
    'every service of the stack gone',
    { describe: () => running.stderr() },
  );
  expect(existsSync(path.join(stateDir, 'children.json'))).toBe(false);
  stack = undefined;
});
