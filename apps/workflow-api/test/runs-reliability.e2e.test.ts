import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Workflow } from '@svc/sdk';
import { createRedis } from '@svc/service-kit';
import { eventually, freePort, sleep, startRunStack, testRedisUrl } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { expectEachCompletedOnce as expectCompletedOnce } from './support/completions';

/**
 * Fault cases of the run engine with real processes. Redis is shared with the other suites of this machine, so
 * this file's stacks use a Redis database index of their own and "flush all" is FLUSHDB on it: for the stack it
 * is the same as FLUSHALL (every queue key and job is gone), without wiping what other suites run.
 */
// Real processes on a shared 2-core machine: generous per-test bounds.
jest.setTimeout(90_000);

const REDIS_DB_URL = testRedisUrl(7);
/** Kill rounds: 20 in the test suite; `pnpm soak:runs` runs many more. */
const KILL_ROUNDS = Number(process.env.SVC_SOAK_ROUNDS ?? 20);

/** A handler that takes a while, so faults land while stages are in flight. */
function slowHandler(ms: number): string {
  const file = path.join(os.tmpdir(), `svc-slow-${ms}-${randomUUID()}.cjs`);
  writeFileSync(
    file,
    `const { defaultStageHandler } = require(${JSON.stringify(
      path.resolve(__dirname, '..', '..', 'reference-agent', 'dist', 'index.js'),
    )});
     module.exports = async (ctx) => { await new Promise((r) => setTimeout(r, ${ms})); return defaultStageHandler(ctx); };`,
  );
  return file;
}

type Stack = RunStack<Database>;

/** The stack's Workflow API through the SDK, without client retries (the services' own recovery is tested). */
function workflowOf(s: Stack): Workflow {
  return new Workflow({ baseUrl: s.workflowUrl, apiKey: s.apiKey, projectId: s.project.id, maxRetries: 0 });
}

function openDatabase(url: string): Database {
  return createDatabase(url, { poolSize: 2 });
}

async function invokeAndLaunch(s: Stack, intent: string): Promise<string> {
  const workflow = workflowOf(s);
  const { invocation } = await workflow.invocations.create({ intent });
  await workflow.invocations.launch(invocation.invocation_id);
  return invocation.invocation_id;
}

/** Every invocation completed exactly once (see the support module), through this stack's SDK client. */
function expectEachCompletedOnce(s: Stack, ids: string[], timeoutMs: number): Promise<void> {
  return expectCompletedOnce(workflowOf(s), s.database, ids, timeoutMs);
}

describe('worker and Redis faults', () => {
  let s: Stack;

  beforeAll(async () => {
    // No agent is killed here, so a stall would only be a false alarm: an owner learns of a new stage within
    // its poll wait (10 s) or idle pause when a wake-up is lost to a killed worker, longer than the 3 s stall
    // setting the other tests use. Under a loaded machine both agents could be marked stalled for one stage.
    s = await startRunStack({
      redisUrl: REDIS_DB_URL,
      database: openDatabase,
      env: { WORKFLOW_STAGE_STALL_SECONDS: '20' },
    });
    await s.addAgent(['fault'], { handler: slowHandler(150) });
    await s.addAgent(['fault'], { handler: slowHandler(150) });
  }, 120_000);

  afterAll(async () => {
    await s?.close();
  }, 30_000);

  test(
    `kill -9 of the worker in the middle of launches, ${KILL_ROUNDS} times: each invocation completes exactly once`,
    async () => {
      const route = await s.seedRoute({
        intent: 'killed worker report',
        stages: [
          { key: 'one', title: 'One', required_capabilities: ['fault'] },
          { key: 'two', title: 'Two', required_capabilities: ['fault'] },
        ],
      });
      const ids: string[] = [];
      for (let round = 0; round < KILL_ROUNDS; round++) {
        const launches = Array.from({ length: 3 }, () => invokeAndLaunch(s, route.intent));
        await sleep(Math.floor(Math.random() * 120));
        const pid = s.worker.child.pid;
        await s.restartWorker(); // SIGKILL, then a new worker process
        expect(s.worker.child.pid).not.toBe(pid);
        ids.push(...(await Promise.all(launches)));
      }
      expect(ids).toHaveLength(KILL_ROUNDS * 3);
      await expectEachCompletedOnce(s, ids, 90_000);
    },
    240_000 + KILL_ROUNDS * 5_000,
  );

  test('FLUSHALL (of the stack’s Redis) while runs are in flight: every invocation still completes', async () => {
    const route = await s.seedRoute({
      intent: 'flushed redis report',
      stages: [
        { key: 'first', title: 'First', required_capabilities: ['fault'] },
        { key: 'second', title: 'Second', required_capabilities: ['fault'] },
      ],
    });
    const ids = await Promise.all(Array.from({ length: 12 }, () => invokeAndLaunch(s, route.intent)));
    await sleep(250);
    const redis = createRedis(REDIS_DB_URL);
    try {
      expect(await redis.dbsize()).toBeGreaterThan(0);
      await redis.flushdb();
      await sleep(400);
      await redis.flushdb();
    } finally {
      await redis.quit();
    }
    await expectEachCompletedOnce(s, ids, 60_000);
  }, 180_000);
});

/** A Postgres server of this test's own (initdb in a temporary folder), so restarting it disturbs nobody else. */
function privatePostgres(port: number) {
  const bin = execFileSync('pg_config', ['--bindir']).toString().trim();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : path.join(bin, tool),
      asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args,
      {
        stdio: 'pipe',
      },
    );
  run('initdb', ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const ctl = (action: 'start' | 'stop') =>
    run('pg_ctl', [
      '-D',
      path.join(dir, 'data'),
      '-l',
      path.join(dir, 'log'),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      ...(action === 'stop' ? ['-m', 'fast'] : []),
      action,
    ]);
  return {
    url: `postgresql://postgres@127.0.0.1:${port}`,
    start: () => ctl('start'),
    stop: () => ctl('stop'),
    remove() {
      try {
        ctl('stop');
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('Postgres restart', () => {
  let s: Stack | undefined;
  let pg: ReturnType<typeof privatePostgres>;

  beforeAll(async () => {
    pg = privatePostgres(await freePort());
    pg.start();
    s = await startRunStack({
      workflowServerUrl: pg.url,
      redisUrl: REDIS_DB_URL,
      database: openDatabase,
      env: { LOG_LEVEL: 'info' },
    });
    await s.addAgent(['pg'], { handler: slowHandler(300) });
  }, 120_000);

  afterAll(async () => {
    await s?.close().catch(() => undefined);
    pg?.remove();
  }, 30_000);

  test('services recover without a restart; /readyz reports the outage meanwhile', async () => {
    const stack = s!;
    const route = await stack.seedRoute({
      intent: 'restarted postgres report',
      stages: [{ key: 'only', title: 'Only', required_capabilities: ['pg'] }],
    });
    const before = await Promise.all(Array.from({ length: 5 }, () => invokeAndLaunch(stack, route.intent)));
    const pids = [stack.api.child.pid, stack.worker.child.pid];
    pg.stop();
    const down = await fetch(`${stack.workflowUrl}/readyz`);
    expect(down.status).toBe(503);
    expect(((await down.json()) as { checks: Record<string, string> }).checks.postgres).toMatch(/^failed/);
    const health = await fetch(`${stack.workflowUrl}/healthz`);
    expect(health.status).toBe(200);
    await sleep(1_000);
    pg.start();
    await eventually(
      async () => (await fetch(`${stack.workflowUrl}/readyz`)).status === 200,
      20_000,
      'the Workflow API to be ready again',
      { intervalMs: 200 },
    );
    const after = await Promise.all(Array.from({ length: 3 }, () => invokeAndLaunch(stack, route.intent)));
    const workflow = workflowOf(stack);
    try {
      for (const invocationId of [...before, ...after]) {
        await workflow.invocations.waitForArtifact(invocationId, { timeoutMs: 90_000, waitFor: 'all' });
      }
    } catch (error) {
      // Say what the engine was doing, so a failure here can be understood from the CI output alone.
      const outbox = await stack.database.prisma.outboxEntry
        .findMany({ where: { processedAt: null } })
        .catch(String);
      process.stderr.write(
        `outbox not processed: ${JSON.stringify(outbox)}\n--- worker (exit ${String(stack.worker.child.exitCode ?? stack.worker.child.signalCode)})\n${stack.worker.stdout().slice(-20_000)}${stack.worker.stderr().slice(-5_000)}\n--- api\n${stack.api.stdout().slice(-10_000)}\n`,
      );
      throw error;
    }
    expect([stack.api.child.pid, stack.worker.child.pid]).toEqual(pids);
    expect(stack.api.child.exitCode).toBeNull();
    const one = await workflow.invocations.get(before[0]!);
    expect(one.state).toBe('completed');
  }, 180_000);
});
