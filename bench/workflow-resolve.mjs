#!/usr/bin/env node
// Resolve latency of the Workflow API with 10 000 active contracts, measured end to end over loopback HTTP.
//
//   pnpm run build && node bench/workflow-resolve.mjs [--contracts 10000] [--requests 4000] [--warmup 500]
//                                                    [--concurrency 1] [--rounds 4] [--json]
//
// Starts the built hub (`apps/hub-api/dist/main.js`) and the built Workflow API (`apps/workflow-api/dist/
// main.js`), each exactly as deployed (logging at `info` to /dev/null) over fresh, migrated test databases;
// bootstraps a workspace, signs in, creates a project and an API key holding `workflow-contracts:read`
// through the hub's public API. Inserts `--contracts` active contracts (plus one universal fallback) and 100
// template versions straight into the workflow database, then measures with the same number of requests in
// flight, in alternating slices (a, b, a, b, …):
//   (a) GET  …/workflow/contracts/{id}   — key authentication (hub introspection, cached), project check, one read
//   (b) POST …/workflow/resolve-intent   — the same, plus the deterministic match over every active contract
// and prints p50/p99 of each against the targets: resolve p99 < 5 ms and p99(b)/p99(a) ≤ 1.5×.
// A missed target is reported, not failed: the exit code is non-zero only when a request errs or set-up fails.
// Only 127.0.0.1 is contacted.
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

const TARGET_P99_MS = 5;
const TARGET_RATIO = 1.5;

const { values: args } = parseArgs({
  options: {
    contracts: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '4000' },
    warmup: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const contractCount = intBetween(args.contracts, 'contracts', 1, 200_000);
const requestCount = intBetween(args.requests, 'requests', 10, 1_000_000);
const warmupCount = intBetween(args.warmup, 'warmup', 0, 1_000_000);
const concurrency = intBetween(args.concurrency, 'concurrency', 1, 256);
const rounds = intBetween(args.rounds, 'rounds', 1, 100);

function intBetween(value, name, min, max) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    fail(`--${name} must be an integer between ${min} and ${max}`);
  return n;
}
function fail(message) {
  console.error(`workflow-resolve: ${message}`);
  process.exit(2);
}
function loadBuilt(file) {
  try {
    return require(file);
  } catch (error) {
    fail(`cannot load ${path.relative(root, file)} (${error.message}); run \`pnpm run build\` first`);
  }
}

const { MIGRATIONS_DIR: HUB_MIGRATIONS } = loadBuilt(path.join(hubDir, 'dist', 'app.js'));
const { MIGRATIONS_DIR: WORKFLOW_MIGRATIONS } = loadBuilt(path.join(workflowDir, 'dist', 'app.js'));
const { createTestDatabase, freePort } = loadBuilt(
  path.join(root, 'packages', 'testing', 'dist', 'index.js'),
);
const { newId } = loadBuilt(path.join(root, 'packages', 'service-kit', 'dist', 'index.js'));
const pg = createRequire(path.join(workflowDir, 'package.json'))('pg');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a built entry point of an app with only the given environment (plus PATH). */
function runEntryPoint(dir, script, env, { captureStdout = false } = {}) {
  const child = spawn(process.execPath, [path.join(dir, 'dist', script)], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', captureStdout ? 'pipe' : 'ignore', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function waitReady(baseUrl, proc, name, withinMs = 30_000) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${name} exited during start-up:\n${proc.stderr()}`);
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${name} was not ready within ${withinMs / 1000} s:\n${proc.stderr()}`);
}

async function stop(proc) {
  if (!proc || proc.child.exitCode !== null) return;
  proc.child.kill('SIGTERM');
  const stopped = await Promise.race([proc.exited, sleep(10_000).then(() => 'timeout')]);
  if (stopped === 'timeout') proc.child.kill('SIGKILL');
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

const VERBS = ['deploy', 'review', 'triage', 'migrate', 'audit', 'summarize', 'translate', 'benchmark'];
const CAPABILITIES = ['code', 'review', 'k8s', 'sql', 'docs', 'security', 'gpu', 'i18n'];

/** Inserts the contracts and templates in batches of 1 000 rows per statement. */
async function seed(databaseUrl, workspaceId, projectId) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const templates = [];
    for (let t = 0; t < 100; t += 1) {
      templates.push([
        newId('wtp'),
        projectId,
        `tpl-${t}`,
        '1.0.0',
        JSON.stringify({
          required_capabilities: [CAPABILITIES[t % CAPABILITIES.length]],
          artifact_schema: { name: 'report', version: '1' },
          guardrails: { human_approval_required: t % 2 === 0 },
        }),
      ]);
    }
    await insert(
      client,
      'workflow_templates',
      ['id', 'project_id', 'key', 'version', 'definition'],
      templates,
    );
    const rows = [];
    for (let i = 0; i < contractCount; i += 1) {
      const classifier = {
        intentContains: [`${VERBS[i % VERBS.length]} service-${i}`, `ticket ${i}-x`],
        requiredCapabilities: i % 3 === 0 ? [CAPABILITIES[i % CAPABILITIES.length]] : [],
        metadata: i % 5 === 0 ? { app: `app-${i % 50}` } : {},
      };
      rows.push([
        newId('wfc'),
        workspaceId,
        projectId,
        `contract ${i}`,
        i % 10,
        JSON.stringify(classifier),
        false,
        `tpl-${i % 100}`,
        '1.0.0',
      ]);
    }
    rows.push([
      newId('wfc'),
      workspaceId,
      projectId,
      'fallback',
      -1,
      JSON.stringify({ intentContains: [], requiredCapabilities: [], metadata: {} }),
      true,
      'tpl-0',
      '1.0.0',
    ]);
    const columns = [
      'id',
      'workspace_id',
      'project_id',
      'name',
      'priority',
      'classifier',
      'is_fallback',
      'template_key',
      'template_version',
    ];
    for (let at = 0; at < rows.length; at += 1000) {
      await insert(client, 'workflow_contracts', columns, rows.slice(at, at + 1000));
    }
    return rows[0][0];
  } finally {
    await client.end();
  }
}

async function insert(client, table, columns, rows) {
  const values = [];
  const tuples = rows.map((row) => `(${row.map((v) => `$${values.push(v)}`).join(', ')})`);
  await client.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, values);
}

/** The i-th resolve body: it names one contract's phrase, so a handful of contracts are candidates. */
function resolveBody(i) {
  const n = (i * 7919) % contractCount;
  return JSON.stringify({
    intent: `Please ${VERBS[n % VERBS.length].toUpperCase()}   service-${n} for the quarterly report`,
    required_capabilities: [CAPABILITIES[n % CAPABILITIES.length], 'docs'],
    metadata: { app: `app-${n % 50}`, route: '/reports' },
  });
}

/** Sends `count` requests with `concurrency` in flight; records each latency when `record` is true. */
async function load(route, count, record) {
  const latencies = [];
  const errors = new Map();
  let next = 0;
  const started = performance.now();
  async function loop() {
    while (next < count) {
      const i = next;
      next += 1;
      const request = route.request(i);
      const t0 = performance.now();
      try {
        const res = await fetch(route.url, request);
        const text = await res.text();
        if (res.status !== 200 || (route.check && !route.check(text))) {
          const key = `HTTP ${res.status}`;
          errors.set(key, (errors.get(key) ?? 0) + 1);
          continue;
        }
      } catch (error) {
        const key = error?.cause?.code ?? error?.name ?? 'error';
        errors.set(key, (errors.get(key) ?? 0) + 1);
        continue;
      }
      if (record) latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { latencies, errors, elapsedMs: performance.now() - started };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measureBoth(routes) {
  for (const route of routes) await load(route, warmupCount, false);
  const perSlice = Math.ceil(requestCount / rounds);
  const totals = routes.map(() => ({ latencies: [], errors: new Map(), elapsedMs: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (const [i, route] of routes.entries()) {
      const run = await load(route, perSlice, true);
      const total = totals[i];
      for (const l of run.latencies) total.latencies.push(l);
      for (const [k, v] of run.errors) total.errors.set(k, (total.errors.get(k) ?? 0) + v);
      total.elapsedMs += run.elapsedMs;
    }
  }
  return routes.map((route, i) => {
    const total = totals[i];
    const sorted = Float64Array.from(total.latencies).sort();
    return {
      name: route.name,
      requests: total.latencies.length,
      rps: total.latencies.length / (total.elapsedMs / 1000),
      p50_ms: percentile(sorted, 50),
      p99_ms: percentile(sorted, 99),
      errors: Object.fromEntries(total.errors),
    };
  });
}

async function main() {
  const hubDb = await createTestDatabase({ migrationsDir: HUB_MIGRATIONS, prefix: 'svc_hub_bench' });
  const workflowDb = await createTestDatabase({
    migrationsDir: WORKFLOW_MIGRATIONS,
    prefix: 'svc_workflow_bench',
  });
  let hub;
  let workflow;
  try {
    const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
    const password = randomBytes(18).toString('base64url');
    const bootstrap = runEntryPoint(
      hubDir,
      'bootstrap.js',
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
    hub = runEntryPoint(hubDir, 'main.js', {
      HUB_HOST: '127.0.0.1',
      HUB_PORT: String(hubPort),
      HUB_PUBLIC_URL: hubUrl,
      DATABASE_URL: hubDb.url,
      HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      HUB_SERVICE_TOKEN: serviceToken,
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    });
    await waitReady(hubUrl, hub, 'the hub');

    const session = await postJson(`${hubUrl}/api/v1/auth/login`, { email, password });
    const auth = { authorization: `Bearer ${session.token}` };
    const project = await postJson(
      `${hubUrl}/api/v1/workspaces/${workspace.slug}/projects`,
      { code: 'BENCH', name: 'Benchmark' },
      auth,
    );
    const key = await postJson(
      `${hubUrl}/api/v1/workspaces/${workspace.slug}/api-keys`,
      { name: 'bench', scopes: ['workflow-contracts:read'] },
      auth,
    );

    const seedStarted = performance.now();
    const firstContract = await seed(workflowDb.url, workspace.id, project.id);
    const seedMs = performance.now() - seedStarted;

    const port = await freePort();
    const workflowUrl = `http://127.0.0.1:${port}`;
    workflow = runEntryPoint(workflowDir, 'main.js', {
      WORKFLOW_HOST: '127.0.0.1',
      WORKFLOW_PORT: String(port),
      WORKFLOW_PUBLIC_URL: workflowUrl,
      DATABASE_URL: workflowDb.url,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      WORKFLOW_QUEUE_PREFIX: `bench${randomBytes(3).toString('hex')}`,
      HUB_URL: hubUrl,
      HUB_SERVICE_TOKEN: serviceToken,
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    });
    await waitReady(workflowUrl, workflow, 'the Workflow API');

    const headers = { 'x-api-key': key.key };
    const base = `${workflowUrl}/api/v1/projects/${project.id}/workflow`;
    const compileStarted = performance.now();
    const first = await fetch(`${base}/resolve-intent`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: resolveBody(0),
    });
    const firstBody = await first.json();
    const firstResolveMs = performance.now() - compileStarted;
    if (first.status !== 200 || firstBody.data?.matched !== true) {
      throw new Error(`resolve answered ${first.status} ${JSON.stringify(firstBody).slice(0, 300)}`);
    }

    const loadBefore = os.loadavg()[0];
    const [get, resolve] = await measureBoth([
      {
        name: 'GET …/workflow/contracts/{id}',
        url: `${base}/contracts/${firstContract}`,
        request: () => ({ headers }),
      },
      {
        name: 'POST …/workflow/resolve-intent',
        url: `${base}/resolve-intent`,
        request: (i) => ({
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: resolveBody(i + 1),
        }),
        check: (text) => text.includes('"matched":true'),
      },
    ]);
    const ratio = resolve.p99_ms / get.p99_ms;
    const errorCount = [get, resolve].flatMap((r) => Object.values(r.errors)).reduce((a, b) => a + b, 0);
    const result = {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        load_average_1m: { before: loadBefore, after: os.loadavg()[0] },
      },
      settings: {
        contracts: contractCount + 1,
        requests: requestCount,
        warmup: warmupCount,
        concurrency,
        rounds,
      },
      seed_ms: seedMs,
      first_resolve_ms: firstResolveMs,
      first_resolve_candidates: firstBody.data.explanation.candidates.length,
      results: [get, resolve],
      resolve_p99_ms: resolve.p99_ms,
      p99_ratio: ratio,
      targets: { resolve_p99_ms: TARGET_P99_MS, p99_ratio: TARGET_RATIO },
      targets_met: { resolve_p99: resolve.p99_ms < TARGET_P99_MS, p99_ratio: ratio <= TARGET_RATIO },
      errors: errorCount,
    };
    if (args.json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
      console.log(
        `workflow resolve — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
          `${contractCount + 1} active contracts (seeded in ${f(seedMs / 1000, 1)} s), ${concurrency} in flight, ` +
          `${requestCount} requests per route in ${rounds} alternating slices after ${warmupCount} warm-up, ` +
          `load average ${f(loadBefore, 2)} → ${f(result.machine.load_average_1m.after, 2)}`,
      );
      console.log(
        `first resolve (loads and compiles the classifiers): ${f(firstResolveMs, 0)} ms, ` +
          `${result.first_resolve_candidates} candidates listed`,
      );
      console.log('');
      console.log('| route | requests | req/s | p50 ms | p99 ms | errors |');
      console.log('|---|---:|---:|---:|---:|---:|');
      for (const r of result.results) {
        const errs =
          Object.entries(r.errors)
            .map(([k, v]) => `${k}×${v}`)
            .join(' ') || '0';
        console.log(
          `| ${r.name} | ${r.requests} | ${f(r.rps, 0)} | ${f(r.p50_ms, 2)} | ${f(r.p99_ms, 2)} | ${errs} |`,
        );
      }
      console.log('');
      console.log(
        `resolve p99 ${f(resolve.p99_ms, 2)} ms — target < ${TARGET_P99_MS} ms: ${result.targets_met.resolve_p99 ? 'met' : 'NOT met'}`,
      );
      console.log(
        `p99 ratio resolve/get: ${f(ratio, 2)}× — target ≤ ${TARGET_RATIO}×: ${result.targets_met.p99_ratio ? 'met' : 'NOT met'}`,
      );
    }
    if (errorCount > 0) {
      console.error(`workflow-resolve: ${errorCount} request(s) failed`);
      process.exitCode = 1;
    }
  } finally {
    await stop(workflow);
    await stop(hub);
    await Promise.all([workflowDb.drop(), hubDb.drop()]);
  }
}

main().catch((error) => {
  console.error(`workflow-resolve: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
