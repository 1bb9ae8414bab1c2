#!/usr/bin/env node
// Sustained Invoke throughput of the Workflow API against a raw baseline measured in the same run.
//
//   pnpm run build && node bench/workflow-invoke.mjs [--concurrency 32] [--duration 8] [--warmup 2]
//                                                   [--rounds 4] [--rate 300] [--rate-duration 10]
//                                                   [--pool 10] [--cpu-prof DIR] [--json]
//
// Starts the built hub (for API-key introspection and project lookup) and the built Workflow API
// (`apps/workflow-api/dist/main.js`, as deployed, logging every request at `info` to /dev/null) over fresh,
// migrated test databases; bootstraps a workspace, creates a project and a `workflows:run` key through the
// hub's public API, and seeds one matching contract with its template. The baseline is a bare express handler
// in its own process doing one `INSERT … ON CONFLICT (project_id, idempotency_key) DO NOTHING` into an
// equivalent table of the same database over a pool of the same size. Then
//   1. closed loop: `--concurrency` requests in flight, each with a new Idempotency-Key, measured in
//      alternating slices (baseline, invoke, …) — requests/s of each and the ratio invoke/baseline
//      (target ≥ 0.5×);
//   2. open loop: requests sent at a fixed `--rate` (default 300/s) whatever the answers, latency measured
//      from each request's scheduled send time (no coordinated omission), to the baseline and to invoke in
//      alternating slices at the same rate — invoke's p50/p99 (target p99 < 25 ms) and invoke's p99 against
//      the baseline's p99 (target ≤ 1.5×).
// A missed target is reported, not failed; the exit code is non-zero only when a request errs or the
// set-up fails. Only 127.0.0.1 is contacted.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchCli, load, requireFrom, run, testing } from './harness/cli.mjs';
import { alternate, openLoop } from './harness/load.mjs';
import { f, loadChange, machine, printLoadTable, printResult, targetLine } from './harness/report.mjs';
import { cpuProfileArgs, createBenchWorkspace, redisUrl } from './harness/stack.mjs';

const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 25;
/** Invoke's open-loop p99 against the baseline's at the same rate. */
const TARGET_P99_RATIO = 1.5;

const options = benchCli('workflow-invoke', ({ flag, int, seconds, text }) => ({
  concurrency: int('32', 1, 1024),
  duration: seconds('8'),
  warmup: seconds('2'),
  rounds: int('4', 1, 100),
  rate: int('300', 1, 20_000),
  'rate-duration': seconds('10'),
  pool: int('10', 1, 100),
  'cpu-prof': text(),
  json: flag(),
  // Internal: run the baseline server in this process (the bench starts it as a child).
  'baseline-server': flag(),
  'database-url': text(),
  port: text(),
}));
const { concurrency, duration: durationMs, warmup: warmupMs, rounds, rate, pool: poolSize } = options;
const rateDurationMs = options['rate-duration'];

const { createPool } = load('packages/db-kit/dist/index.js');

const BASELINE_TABLE = `
  CREATE TABLE IF NOT EXISTS bench_invocations (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, project_id TEXT NOT NULL, idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL, correlation_id TEXT, request JSONB NOT NULL, contract_id TEXT,
    template_key TEXT, template_version TEXT, route JSONB NOT NULL DEFAULT '{}',
    state TEXT NOT NULL DEFAULT 'received', attention TEXT NOT NULL DEFAULT 'none',
    created_by_kind TEXT NOT NULL, created_by_id TEXT,
    created_at TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, key_expires_at TIMESTAMPTZ(3) NOT NULL,
    UNIQUE (project_id, idempotency_key))`;

/** The baseline: a bare express handler doing one INSERT … ON CONFLICT, over a pool of the same size. */
async function runBaselineServer() {
  const express = requireFrom('packages/service-kit', 'express');
  const pool = createPool(options['database-url'], { max: poolSize });
  const app = express();
  app.use(express.json());
  let n = 0;
  app.post('/invocations', async (req, res) => {
    try {
      const key = req.get('idempotency-key');
      const id = `inv_${process.pid}_${(n += 1)}`;
      const result = await pool.query(
        `INSERT INTO bench_invocations (id, workspace_id, project_id, idempotency_key, fingerprint, request,
           created_by_kind, key_expires_at)
         VALUES ($1, 'ws', 'prj', $2, 'f', $3::jsonb, 'api_key', now() + interval '30 days')
         ON CONFLICT (project_id, idempotency_key) DO NOTHING RETURNING id`,
        [id, key, JSON.stringify(req.body)],
      );
      res.status(result.rowCount === 1 ? 201 : 200).json({ data: { invocation_id: id } });
    } catch (error) {
      res.status(500).json({ code: 'internal_error', detail: String(error?.message ?? error) });
    }
  });
  // For the bench's start-up wait only; routed after the measured one.
  app.get('/readyz', (_req, res) => res.sendStatus(200));
  const server = app.listen(Number(options.port), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}

const BODY = JSON.stringify({ intent: 'Please send the weekly report', required_capabilities: ['code'] });
let sequence = 0;

/** An invoke-shaped POST to the target with a fresh Idempotency-Key; succeeds on 201. */
function invokeSender(target) {
  return testing().httpSender(target.url, {
    status: 201,
    init: () => ({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `bench-${process.pid}-${(sequence += 1)}`,
        ...target.headers,
      },
      body: BODY,
    }),
  });
}

async function main() {
  const harness = testing();
  const [hubDb, wfDb] = await Promise.all([
    harness.createHubDatabase('svc_hub_bench'),
    harness.createWorkflowDatabase('svc_workflow_bench'),
  ]);
  const procs = [];
  const pool = createPool(wfDb.url, { max: 2 });
  try {
    const serviceToken = harness.newServiceToken();
    const hub = await harness.startHub({
      databaseUrl: hubDb.url,
      serviceToken,
      env: { NODE_ENV: 'production' },
      process: { outputLimit: 4000 },
    });
    procs.push(hub.process);
    const owner = await createBenchWorkspace(hub.url, hubDb.url);
    const project = await owner.createProject('BENCH', 'Bench');
    const key = await owner.createApiKey(['workflows:run'], 'bench');

    // One matching contract with its template, and the baseline's table, in the workflow database.
    await pool.query(
      `INSERT INTO workflow_contracts (id, workspace_id, project_id, name, priority, classifier, template_key,
         template_version)
       VALUES ('wfc_bench', $1, $2, 'Reports', 10, $3::jsonb, 'report-flow', '1.0.0')`,
      [
        owner.workspace.id,
        project.id,
        JSON.stringify({ intentContains: ['weekly report'], requiredCapabilities: [], metadata: {} }),
      ],
    );
    await pool.query(
      `INSERT INTO workflow_templates (id, project_id, key, version, definition)
       VALUES ('wft_bench', $1, 'report-flow', '1.0.0', $2::jsonb)`,
      [
        project.id,
        JSON.stringify({
          required_capabilities: ['code'],
          artifact_schema: { name: 'report', version: '1.0.0' },
          guardrails: { human_approval_required: false },
          stages: [{ key: 'build', title: 'Build', required_capabilities: ['code'] }],
        }),
      ],
    );
    await pool.query(BASELINE_TABLE);

    const wf = await harness.workflowEnv({
      databaseUrl: wfDb.url,
      redisUrl,
      queuePrefix: harness.uniqueQueuePrefix('bench'),
      hubUrl: hub.url,
      serviceToken,
      // Every request logged at info, to /dev/null.
      logLevel: 'info',
      env: { WORKFLOW_DB_POOL_SIZE: String(poolSize), NODE_ENV: 'production' },
    });
    const profileDir = options['cpu-prof'] ? path.resolve(options['cpu-prof']) : undefined;
    procs.push(
      await harness.startWorkflowApi(wf, {
        stdout: 'ignore',
        outputLimit: 4000,
        nodeArgs: cpuProfileArgs(profileDir),
      }),
    );

    const basePort = await harness.freePort();
    const script = fileURLToPath(import.meta.url);
    const baseline = harness.startBuiltEntryPoint(
      path.dirname(script),
      script,
      {},
      {
        name: 'the baseline',
        args: [
          '--baseline-server',
          '--database-url',
          wfDb.url,
          '--port',
          String(basePort),
          '--pool',
          String(poolSize),
        ],
        outputLimit: 4000,
      },
    );
    procs.push(baseline);
    await harness.waitUntilReady(baseline, `http://127.0.0.1:${basePort}`);

    const invokeTarget = {
      name: 'POST …/workflow/invocations (Workflow API)',
      url: `${wf.url}/api/v1/projects/${project.id}/workflow/invocations`,
      headers: { 'x-api-key': key },
    };
    const baselineTarget = {
      name: 'POST /invocations (bare express + one INSERT … ON CONFLICT)',
      url: `http://127.0.0.1:${basePort}/invocations`,
      headers: {},
    };

    const loadBefore = os.loadavg()[0];
    const [base, invoke] = await harness.measureAlternating(
      [baselineTarget, invokeTarget].map((target) => ({
        name: target.name,
        send: invokeSender(target),
      })),
      { concurrency, rounds, warmup: { durationMs: warmupMs }, slice: { durationMs: durationMs / rounds } },
    );
    const [openBase, open] = await alternate(
      [baselineTarget, invokeTarget].map((target) => ({
        name: `${target === invokeTarget ? 'invoke' : 'baseline'} at ${rate}/s (open loop)`,
        send: invokeSender(target),
      })),
      { durationMs: rateDurationMs, rounds, runSlice: (target, ms) => openLoop(target.send, rate, ms) },
    );
    const ratio = invoke.rps / base.rps;
    const p99Ratio = open.p99_ms / openBase.p99_ms;
    const errorCount = harness.countErrors([base, invoke, openBase, open]);
    const result = {
      date: new Date().toISOString(),
      machine: machine(loadBefore),
      settings: {
        concurrency,
        duration_s: durationMs / 1000,
        warmup_s: warmupMs / 1000,
        rounds,
        rate,
        rate_duration_s: rateDurationMs / 1000,
        pool: poolSize,
      },
      results: [base, invoke],
      ratio,
      target_ratio: TARGET_RATIO,
      ratio_met: ratio >= TARGET_RATIO,
      open_loop: open,
      open_loop_baseline: openBase,
      target_p99_ms: TARGET_P99_MS,
      p99_met: open.p99_ms < TARGET_P99_MS,
      p99_ratio: p99Ratio,
      target_p99_ratio: TARGET_P99_RATIO,
      p99_ratio_met: p99Ratio <= TARGET_P99_RATIO,
      errors: errorCount,
    };
    printResult(result, options.json, () => {
      console.log(
        `workflow invoke — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
          `pool ${poolSize}, ${concurrency} in flight, ${durationMs / 1000} s per target in ${rounds} alternating ` +
          `slices after ${warmupMs / 1000} s warm-up, then ${rate}/s for ${rateDurationMs / 1000} s per target in ` +
          `${rounds} alternating slices; load average ` +
          loadChange(result.machine.load_average_1m),
      );
      console.log('');
      printLoadTable('target', [...result.results, result.open_loop_baseline, result.open_loop]);
      console.log('');
      console.log(
        targetLine(`throughput invoke/baseline: ${f(ratio, 2)}×`, `≥ ${TARGET_RATIO}×`, result.ratio_met),
      );
      console.log(
        targetLine(`p99 at ${rate}/s: ${f(open.p99_ms, 2)} ms`, `< ${TARGET_P99_MS} ms`, result.p99_met),
      );
      console.log(
        targetLine(
          `p99 at ${rate}/s invoke/baseline: ${f(open.p99_ms, 2)} / ${f(openBase.p99_ms, 2)} ms = ${f(p99Ratio, 2)}×`,
          `≤ ${TARGET_P99_RATIO}×`,
          result.p99_ratio_met,
        ),
      );
    });
    if (errorCount > 0) {
      console.error(`workflow-invoke: ${errorCount} request(s) failed`);
      process.exitCode = 1;
    }
  } finally {
    for (const proc of procs.reverse()) await proc.stop();
    await pool.end();
    await Promise.all([wfDb.drop(), hubDb.drop()]);
  }
}

if (options['baseline-server']) {
  runBaselineServer().catch((error) => {
    console.error(`workflow-invoke baseline: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  });
} else {
  run(main);
}
