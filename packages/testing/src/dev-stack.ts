import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { dropDatabase } from '@svc/db-kit';
import { eventually, exitWithin, freePort, startBuiltEntryPoint } from './process';
import type { NodeProcess } from './process';
import { testDatabaseServerUrl, testRedisUrl } from './servers';

/**
 * The development stack's launcher (`pnpm start`), started from its build as the tests of the stack itself and
 * the control web app's browser tests run it.
 */
const devStackDir = path.resolve(__dirname, '..', '..', 'dev-stack');
export const READY_LINE = 'ready — every service answers /readyz';

/** A development stack of a test's own: free ports, its databases, queue prefix and state directory. */
export interface DevStackSettings {
  stateDir: string;
  databases: { hub: string; workflow: string };
  /** The launcher's environment (a second start with the same settings is a restart). */
  env: Record<string, string>;
}

export async function devStackSettings(prefix: string, stateDir: string): Promise<DevStackSettings> {
  const suffix = randomBytes(3).toString('hex');
  const databases = { hub: `svc_${prefix}_${suffix}_hub`, workflow: `svc_${prefix}_${suffix}_wf` };
  return {
    stateDir,
    databases,
    env: {
      DATABASE_URL: testDatabaseServerUrl(),
      REDIS_URL: testRedisUrl(),
      HUB_PORT: String(await freePort()),
      WORKFLOW_PORT: String(await freePort()),
      WORKFLOW_WORKER_PORT: String(await freePort()),
      RELAY_PORT: String(await freePort()),
      CONSOLE_ROUTER_PORT: String(await freePort()),
      SVC_DEV_AGENT_SERVE_PORT: String(await freePort()),
      CONTROL_WEB_PORT: String(await freePort()),
      SVC_DEV_STATE_DIR: stateDir,
      SVC_DEV_HUB_DATABASE: databases.hub,
      SVC_DEV_WORKFLOW_DATABASE: databases.workflow,
      SVC_DEV_QUEUE_PREFIX: `${prefix}${suffix}`,
    },
  };
}

/** Starts the launcher from its build and waits for its ready line; fails with its output when it exits. */
export async function startDevStack(env: Record<string, string>, timeoutMs = 120_000): Promise<NodeProcess> {
  const stack = startBuiltEntryPoint(devStackDir, 'dist/main.js', env);
  try {
    await eventually(
      () => stack.stdout().includes(READY_LINE) || !stack.running(),
      timeoutMs,
      'the dev stack ready',
      {
        intervalMs: 200,
        describe: () => stack.stdout().slice(-3000),
      },
    );
  } catch (error) {
    // A stack that did not get ready in time is stopped: it would hold its state directory and ports.
    if (stack.running()) await stack.stop('SIGTERM', 60_000);
    throw error;
  }
  if (!stack.stdout().includes(READY_LINE))
    throw new Error(`dev stack exited: ${stack.stderr()}\n${stack.stdout().slice(-3000)}`);
  return stack;
}

/** Stops a stack still running (SIGTERM), drops its databases and removes its state directory. */
export async function removeDevStack(
  settings: DevStackSettings,
  stack: NodeProcess | undefined,
): Promise<void> {
  if (stack && stack.child.exitCode === null) {
    stack.child.kill('SIGTERM');
    await exitWithin(stack, 60_000);
  }
  for (const name of Object.values(settings.databases))
    await dropDatabase(testDatabaseServerUrl(), name, { force: true }).catch(() => undefined);
  rmSync(settings.stateDir, { recursive: true, force: true });
}
