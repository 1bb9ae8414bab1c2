#!/usr/bin/env node
// Authentication overhead of the hub, measured end to end over loopback HTTP.
//
//   pnpm run build && node bench/hub-auth-overhead.mjs [--concurrency 32] [--duration 8] [--warmup 2]
//                                                    [--rounds 4] [--json]
//
// Starts the built hub (`apps/hub-api/dist/main.js`, exactly as deployed, logging at `info` to /dev/null) over
// a fresh, migrated test database; bootstraps a workspace and its owner with the hub's own bootstrap
// command; signs in and creates an API key holding `workspaces:read` through the public API. Then, with the
// same number of requests in flight, it measures
//   (a) GET /healthz                            — no credential, no database
//   (b) GET /api/v1/workspaces with x-api-key   — API-key authentication, scope check, one read
// each warmed up first, then measured in alternating slices (a, b, a, b, …; `--rounds` of each adding up to
// `--duration` per route, so load changes on the machine hit both alike), and prints requests/s, p50 and p99
// latency of each and the ratio (b)/(a) against the target ≥ 0.7×.
// A missed target is reported, not failed: the exit code is non-zero only when a request errs or the
// set-up fails. Every loop is bounded by its deadline; only 127.0.0.1 is contacted.
import os from 'node:os';
import { benchCli, run, testing } from './harness/cli.mjs';
import { f, loadChange, machine, printLoadTable, printResult, targetLine } from './harness/report.mjs';
import { createBenchWorkspace } from './harness/stack.mjs';

const TARGET_RATIO = 0.7;

const options = benchCli('hub-auth-overhead', ({ flag, int, seconds }) => ({
  concurrency: int('32', 1, 1024),
  duration: seconds('8'),
  warmup: seconds('2'),
  rounds: int('4', 1, 1024),
  json: flag(),
}));
const { concurrency, duration: durationMs, warmup: warmupMs, rounds } = options;
const { countErrors, createHubDatabase, httpSender, measureAlternating, newServiceToken, startHub } =
  testing();

async function main() {
  const database = await createHubDatabase('svc_hub_bench');
  let hub;
  try {
    hub = await startHub({
      databaseUrl: database.url,
      serviceToken: newServiceToken(),
      // The hub logs every request at info; in the measurement that output goes to /dev/null.
      logLevel: 'info',
      env: { NODE_ENV: 'production' },
      process: { stdout: 'ignore', outputLimit: 4000 },
    });
    const owner = await createBenchWorkspace(hub.url, database.url);
    const key = await owner.createApiKey(['workspaces:read'], 'bench');

    const loadBefore = os.loadavg()[0];
    // Warm-up, then alternating slices adding up to the duration per route.
    const [unauthenticated, authenticated] = await measureAlternating(
      [
        { name: 'GET /healthz (no credential)', send: httpSender(`${hub.url}/healthz`) },
        {
          name: 'GET /api/v1/workspaces (x-api-key)',
          send: httpSender(`${hub.url}/api/v1/workspaces`, {
            init: () => ({ headers: { 'x-api-key': key } }),
          }),
        },
      ],
      { concurrency, rounds, warmup: { durationMs: warmupMs }, slice: { durationMs: durationMs / rounds } },
    );
    const ratio = authenticated.rps / unauthenticated.rps;
    const errorCount = countErrors([unauthenticated, authenticated]);
    const result = {
      date: new Date().toISOString(),
      // Other work on the machine shifts both figures; the alternating slices keep the ratio fair.
      machine: machine(loadBefore),
      settings: { concurrency, duration_s: durationMs / 1000, warmup_s: warmupMs / 1000, rounds },
      results: [unauthenticated, authenticated],
      ratio,
      target: TARGET_RATIO,
      target_met: ratio >= TARGET_RATIO,
      errors: errorCount,
    };
    printResult(result, options.json, () => {
      console.log(
        `hub auth overhead — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
          `${concurrency} in flight, ${durationMs / 1000} s per route in ${rounds} alternating slices after ${warmupMs / 1000} s warm-up, ` +
          `load average ${loadChange(result.machine.load_average_1m)}`,
      );
      console.log('');
      printLoadTable('route', result.results);
      console.log('');
      console.log(targetLine(`ratio (b)/(a): ${f(ratio, 2)}×`, `≥ ${TARGET_RATIO}×`, result.target_met));
    });
    if (errorCount > 0) {
      console.error(`hub-auth-overhead: ${errorCount} request(s) failed`);
      process.exitCode = 1;
    }
  } finally {
    await hub?.process.stop();
    await database.drop();
  }
}

run(main);
