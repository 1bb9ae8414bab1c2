#!/usr/bin/env node
// Sustained Invoke throughput of the Workflow API against a raw baseline measured in the same run.
//
//   pnpm run build && node bench/workflow-invoke.mjs [--concurrency 32] [--duration 8] [--warmup 2]
//                                                   [--rounds 4] [--rate 300] [--rate-duration 10]
//                                                   [--pool 10] [--json]
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
//   2. open loop: invokes sent at a fixed `--rate` (default 300/s) whatever the answers, latency measured
//      from each request's scheduled send time (no coordinated omission) — p50/p99 (target p99 < 25 ms).
// A missed target is reported, not failed; the exit code is non-zero only when a request errs or the
// set-up fails. Only 127.0.0.1 is contacted.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hubDir = path.join(root, 'apps', 'hub-api');
const workflowDir = path.join(root, 'apps', 'workflow-api');
const require = createRequire(import.meta.url);

const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 25;

const { values: args } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '32' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '4' },
    rate: { type: 'string', default: '300' },
    'rate-duration': { type: 'string', default: '10' },
    pool: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    // Internal: run the baseline server in this process (the bench starts it as a child).
    'baseline-server': { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    port: { type: 'string' },
  },
});

function int(value, name, max) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`--${name} must be an integer between 1 and ${max}`);
  return n;
}
function seconds(value, name) {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 600) fail(`--${name} must be a number of seconds in (0, 600]`);
  return n * 1000;
}
function fail(message) {
  console.error(`workflow-invoke: ${message}`);
  process.exit(2);
}

const concurrency = int(args.concurrency, 'concurrency', 1024);
const durationMs = seconds(args.duration, 'duration');
const warmupMs = seconds(args.warmup, 'warmup');
const rounds = int(args.rounds, 'rounds', 100);
const rate = int(args.rate, 'rate', 20_000);
const rateDurationMs = seconds(args['rate-duration'], 'rate-duration');
const poolSize = int(args.pool, 'pool', 100);

function loadBuilt(file) {
  try {
    return require(file);
  } catch (error) {
    fail(`cannot load ${path.relative(root, file)} (${error.message}); run \`pnpm run build\` first`);
  }
}

const { createPool } = loadBuilt(path.join(root, 'packages', 'db-kit', 'dist', 'index.js'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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
  const express = createRequire(path.join(root, 'packages', 'service-kit', 'package.json'))('express');
  const pool = createPool(args['database-url'], { max: poolSize });
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
  const server = app.listen(Number(args.port), '127.0.0.1', () => process.send?.('ready'));
  process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}

/** Runs a node script with only the given environment (plus PATH). */
function runNode(script, argv, env, { captureStdout = false, ipc = false } = {}) {
  const child = spawn(process.execPath, [script, ...argv], {
    cwd: path.dirname(script),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', captureStdout ? 'pipe' : 'ignore', 'pipe', ...(ipc ? ['ipc'] : [])],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function stop(proc) {
  if (!proc || proc.child.exitCode !== null) return;
  proc.child.kill('SIGTERM');
  const stopped = await Promise.race([proc.exited, sleep(10_000).then(() => 'timeout')]);
  if (stopped === 'timeout') proc.child.kill('SIGKILL');
}

async function waitReady(name, url, proc, withinMs = 30_000) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${name} exited during start-up:\n${proc.stderr()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${name} was not ready within ${withinMs / 1000} s:\n${proc.stderr()}`);
}

async function postJson(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`POST ${new URL(url).pathname}: ${res.status} ${json.code ?? ''}`);
  return json.data;
}

const BODY = JSON.stringify({ intent: 'Please send the weekly report', required_capabilities: ['code'] });
let sequence = 0;

/** One invoke-shaped POST with a fresh Idempotency-Key; resolves to an error label or null. */
async function send(target) {
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `bench-${process.pid}-${(sequence += 1)}`,
        ...target.headers,
      },
      body: BODY,
    });
    await res.arrayBuffer();
    return res.status === 201 ? null : `HTTP ${res.status}`;
  } catch (error) {
    return error?.cause?.code ?? error?.name ?? 'error';
  }
}

async function closedLoop(target, ms, record) {
  const latencies = [];
  const errors = new Map();
  const deadline = performance.now() + ms;
  const started = performance.now();
  async function loop() {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const error = await send(target);
      if (error) errors.set(error, (errors.get(error) ?? 0) + 1);
      else if (record) latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { latencies, errors, elapsedMs: performance.now() - started };
}

/** Sends at a fixed rate whatever the answers; latency counts from each request's scheduled time. */
async function openLoop(target, perSecond, ms) {
  const latencies = [];
  const errors = new Map();
  const interval = 1000 / perSecond;
  const total = Math.floor((ms / 1000) * perSecond);
  const start = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i += 1) {
    const scheduled = start + i * interval;
    const wait = scheduled - performance.now();
    if (wait > 1) await sleep(wait);
    inFlight.push(
      send(target).then((error) => {
        if (error) errors.set(error, (errors.get(error) ?? 0) + 1);
        else latencies.push(performance.now() - scheduled);
      }),
    );
  }
  await Promise.all(inFlight);
  return summarize('open loop', { latencies, errors, elapsedMs: performance.now() - start });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summarize(name, total) {
  const sorted = Float64Array.from(total.latencies).sort();
  return {
    name,
    requests: total.latencies.length,
    rps: total.latencies.length / (total.elapsedMs / 1000),
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    errors: Object.fromEntries(total.errors),
  };
}

async function measureBoth(targets) {
  for (const target of targets) await closedLoop(target, warmupMs, false);
  const sliceMs = durationMs / rounds;
  const totals = targets.map(() => ({ latencies: [], errors: new Map(), elapsedMs: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (const [i, target] of targets.entries()) {
      const run = await closedLoop(target, sliceMs, true);
      const total = totals[i];
      for (const l of run.latencies) total.latencies.push(l);
      for (const [k, v] of run.errors) total.errors.set(k, (total.errors.get(k) ?? 0) + v);
      total.elapsedMs += run.elapsedMs;
    }
  }
  return targets.map((target, i) => summarize(target.name, totals[i]));
}

async function main() {
  const { createTestDatabase, freePort } = loadBuilt(
    path.join(root, 'packages', 'testing', 'dist', 'index.js'),
  );
  const { MIGRATIONS_DIR: HUB_MIGRATIONS } = loadBuilt(path.join(hubDir, 'dist', 'app.js'));
  const { MIGRATIONS_DIR: WORKFLOW_MIGRATIONS } = loadBuilt(path.join(workflowDir, 'dist', 'app.js'));
  const hubDb = await createTestDatabase({ migrationsDir: HUB_MIGRATIONS, prefix: 'svc_hub_bench' });
  const wfDb = await createTestDatabase({ migrationsDir: WORKFLOW_MIGRATIONS, prefix: 'svc_workflow_bench' });
  const procs = [];
  const pool = createPool(wfDb.url, { max: 2 });
  try {
    const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
    const password = randomBytes(18).toString('base64url');
    const bootstrap = runNode(
      path.join(hubDir, 'dist', 'bootstrap.js'),
      [],
      {
        DATABASE_URL: hubDb.url,
        BOOTSTRAP_WORKSPACE_SLUG: 'bench',
        BOOTSTRAP_WORKSPACE_NAME: 'Benchmark',
        BOOTSTRAP_ADMIN_EMAIL: email,
        BOOTSTRAP_ADMIN_PASSWORD: password,
        LOG_LEVEL: 'warn',
      },
      { captureStdout: true },
    );
    const code = await bootstrap.exited;
    if (code !== 0) throw new Error(`bootstrap failed (${code}):\n${bootstrap.stderr()}`);
    const { workspace } = JSON.parse(bootstrap.stdout().trim().split('\n').pop());

    const serviceToken = `svs_${randomBytes(32).toString('base64url')}`;
    const hubPort = await freePort();
    const hubUrl = `http://127.0.0.1:${hubPort}`;
    const hub = runNode(path.join(hubDir, 'dist', 'main.js'), [], {
      HUB_HOST: '127.0.0.1',
      HUB_PORT: String(hubPort),
      HUB_PUBLIC_URL: hubUrl,
      DATABASE_URL: hubDb.url,
      HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      HUB_SERVICE_TOKEN: serviceToken,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    });
    procs.push(hub);
    await waitReady('the hub', `${hubUrl}/readyz`, hub);

    const session = await postJson(`${hubUrl}/api/v1/auth/login`, { email, password });
    const auth = { authorization: `Bearer ${session.token}` };
    const project = await postJson(
      `${hubUrl}/api/v1/workspaces/${workspace.slug}/projects`,
      { code: 'BENCH', name: 'Bench' },
      auth,
    );
    const key = await postJson(
      `${hubUrl}/api/v1/workspaces/${workspace.slug}/api-keys`,
      { name: 'bench', scopes: ['workflows:run'] },
      auth,
    );

    // One matching contract with its template, and the baseline's table, in the workflow database.
    await pool.query(
      `INSERT INTO workflow_contracts (id, workspace_id, project_id, name, priority, classifier, template_key,
         template_version)
       VALUES ('wfc_bench', $1, $2, 'Reports', 10, $3::jsonb, 'report-flow', '1.0.0')`,
      [
        workspace.id,
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

    const wfPort = await freePort();
    const wfUrl = `http://127.0.0.1:${wfPort}`;
    const workflow = runNode(path.join(workflowDir, 'dist', 'main.js'), [], {
      WORKFLOW_HOST: '127.0.0.1',
      WORKFLOW_PORT: String(wfPort),
      WORKFLOW_PUBLIC_URL: wfUrl,
      DATABASE_URL: wfDb.url,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      HUB_URL: hubUrl,
      HUB_SERVICE_TOKEN: serviceToken,
      WORKFLOW_DB_POOL_SIZE: String(poolSize),
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    });
    procs.push(workflow);
    await waitReady('the Workflow API', `${wfUrl}/readyz`, workflow);

    const basePort = await freePort();
    const baseline = runNode(
      fileURLToPath(import.meta.url),
      [
        '--baseline-server',
        '--database-url',
        wfDb.url,
        '--port',
        String(basePort),
        '--pool',
        String(poolSize),
      ],
      {},
      { ipc: true },
    );
    procs.push(baseline);
    await new Promise((resolve, reject) => {
      baseline.child.once('message', resolve);
      baseline.exited.then((c) => reject(new Error(`the baseline exited (${c}):\n${baseline.stderr()}`)));
    });

    const invokeTarget = {
      name: 'POST …/workflow/invocations (Workflow API)',
      url: `${wfUrl}/api/v1/projects/${project.id}/workflow/invocations`,
      headers: { 'x-api-key': key.key },
    };
    const baselineTarget = {
      name: 'POST /invocations (bare express + one INSERT … ON CONFLICT)',
      url: `http://127.0.0.1:${basePort}/invocations`,
      headers: {},
    };

    const loadBefore = os.loadavg()[0];
    const [base, invoke] = await measureBoth([baselineTarget, invokeTarget]);
    const open = await openLoop(invokeTarget, rate, rateDurationMs);
    const ratio = invoke.rps / base.rps;
    const errorCount = [base, invoke, open]
      .flatMap((r) => Object.values(r.errors))
      .reduce((a, b) => a + b, 0);
    const result = {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        load_average_1m: { before: loadBefore, after: os.loadavg()[0] },
      },
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
      open_loop: { ...open, name: `invoke at ${rate}/s (open loop)` },
      target_p99_ms: TARGET_P99_MS,
      p99_met: open.p99_ms < TARGET_P99_MS,
      errors: errorCount,
    };
    if (args.json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
      const errs = (r) =>
        Object.entries(r.errors)
          .map(([k, v]) => `${k}×${v}`)
          .join(' ') || '0';
      console.log(
        `workflow invoke — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
          `pool ${poolSize}, ${concurrency} in flight, ${durationMs / 1000} s per target in ${rounds} alternating ` +
          `slices after ${warmupMs / 1000} s warm-up, then ${rate}/s for ${rateDurationMs / 1000} s; load average ` +
          `${f(loadBefore, 2)} → ${f(result.machine.load_average_1m.after, 2)}`,
      );
      console.log('');
      console.log('| target | requests | req/s | p50 ms | p99 ms | errors |');
      console.log('|---|---:|---:|---:|---:|---:|');
      for (const r of [...result.results, result.open_loop]) {
        console.log(
          `| ${r.name} | ${r.requests} | ${f(r.rps, 0)} | ${f(r.p50_ms, 2)} | ${f(r.p99_ms, 2)} | ${errs(r)} |`,
        );
      }
      console.log('');
      console.log(
        `throughput invoke/baseline: ${f(ratio, 2)}× — target ≥ ${TARGET_RATIO}×: ${result.ratio_met ? 'met' : 'NOT met'}`,
      );
      console.log(
        `p99 at ${rate}/s: ${f(open.p99_ms, 2)} ms — target < ${TARGET_P99_MS} ms: ${result.p99_met ? 'met' : 'NOT met'}`,
      );
    }
    if (errorCount > 0) {
      console.error(`workflow-invoke: ${errorCount} request(s) failed`);
      process.exitCode = 1;
    }
  } finally {
    for (const proc of procs.reverse()) await stop(proc);
    await pool.end();
    await Promise.all([wfDb.drop(), hubDb.drop()]);
  }
}

if (args['baseline-server']) {
  runBaselineServer().catch((error) => {
    console.error(`workflow-invoke baseline: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(`workflow-invoke: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  });
}
