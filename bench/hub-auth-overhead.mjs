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
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hubDir = path.join(root, 'apps', 'hub-api');
const require = createRequire(import.meta.url);

const TARGET_RATIO = 0.7;

const { values: args } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '32' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const concurrency = positiveInt(args.concurrency, 'concurrency');
const durationMs = positiveNumber(args.duration, 'duration') * 1000;
const warmupMs = positiveNumber(args.warmup, 'warmup') * 1000;
const rounds = positiveInt(args.rounds, 'rounds');

function positiveInt(value, name) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1024) fail(`--${name} must be an integer between 1 and 1024`);
  return n;
}
function positiveNumber(value, name) {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 600) fail(`--${name} must be a number of seconds in (0, 600]`);
  return n;
}
function fail(message) {
  console.error(`hub-auth-overhead: ${message}`);
  process.exit(2);
}

function loadBuilt(file) {
  try {
    return require(file);
  } catch (error) {
    fail(`cannot load ${path.relative(root, file)} (${error.message}); run \`pnpm run build\` first`);
  }
}

const { MIGRATIONS_DIR } = loadBuilt(path.join(hubDir, 'dist', 'app.js'));
const { createTestDatabase, freePort } = loadBuilt(
  path.join(root, 'packages', 'testing', 'dist', 'index.js'),
);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a built hub entry point with only the given environment (plus PATH). */
function runEntryPoint(script, env, { captureStdout = false } = {}) {
  const child = spawn(process.execPath, [path.join(hubDir, 'dist', script)], {
    cwd: hubDir,
    env: { PATH: process.env.PATH ?? '', ...env },
    // The hub logs every request at info; in the measurement that output goes to /dev/null.
    stdio: ['ignore', captureStdout ? 'pipe' : 'ignore', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function waitReady(baseUrl, hub, withinMs = 30_000) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (hub.child.exitCode !== null) throw new Error(`the hub exited during start-up:\n${hub.stderr()}`);
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`the hub was not ready within ${withinMs / 1000} s:\n${hub.stderr()}`);
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

/**
 * Keeps `concurrency` requests in flight until the deadline; each loop stops by itself once the deadline
 * has passed. Latencies are recorded only when `record` is true (warm-up runs the same loops).
 */
async function load(url, headers, ms, record) {
  const latencies = [];
  const errors = new Map();
  const deadline = performance.now() + ms;
  const started = performance.now();
  async function loop() {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) {
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
  const elapsedMs = performance.now() - started;
  return { latencies, errors, elapsedMs };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Warms both routes up, then measures them in alternating slices (a, b, a, b, …) that add up to the
 * duration per route, so a load change on the machine affects both sides alike.
 */
async function measureBoth(routes) {
  for (const route of routes) await load(route.url, route.headers, warmupMs, false);
  const sliceMs = durationMs / rounds;
  const totals = routes.map(() => ({ latencies: [], errors: new Map(), elapsedMs: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (const [i, route] of routes.entries()) {
      const run = await load(route.url, route.headers, sliceMs, true);
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
  const database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_hub_bench' });
  let hub;
  try {
    const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
    const password = randomBytes(18).toString('base64url');
    const bootstrap = runEntryPoint(
      'bootstrap.js',
      {
        DATABASE_URL: database.url,
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

    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    hub = runEntryPoint('main.js', {
      HUB_HOST: '127.0.0.1',
      HUB_PORT: String(port),
      HUB_PUBLIC_URL: baseUrl,
      DATABASE_URL: database.url,
      HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      HUB_SERVICE_TOKEN: randomBytes(32).toString('base64url'),
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    });
    await waitReady(baseUrl, hub);

    const session = await postJson(`${baseUrl}/api/v1/auth/login`, { email, password });
    const key = await postJson(
      `${baseUrl}/api/v1/workspaces/${workspace.slug}/api-keys`,
      { name: 'bench', scopes: ['workspaces:read'] },
      { authorization: `Bearer ${session.token}` },
    );

    const loadBefore = os.loadavg()[0];
    const [unauthenticated, authenticated] = await measureBoth([
      { name: 'GET /healthz (no credential)', url: `${baseUrl}/healthz`, headers: {} },
      {
        name: 'GET /api/v1/workspaces (x-api-key)',
        url: `${baseUrl}/api/v1/workspaces`,
        headers: { 'x-api-key': key.key },
      },
    ]);
    const ratio = authenticated.rps / unauthenticated.rps;
    const errorCount = [unauthenticated, authenticated]
      .flatMap((r) => Object.values(r.errors))
      .reduce((a, b) => a + b, 0);
    const result = {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        // Other work on the machine shifts both figures; the alternating slices keep the ratio fair.
        load_average_1m: { before: loadBefore, after: os.loadavg()[0] },
      },
      settings: { concurrency, duration_s: durationMs / 1000, warmup_s: warmupMs / 1000, rounds },
      results: [unauthenticated, authenticated],
      ratio,
      target: TARGET_RATIO,
      target_met: ratio >= TARGET_RATIO,
      errors: errorCount,
    };
    if (args.json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
      console.log(
        `hub auth overhead — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
          `${concurrency} in flight, ${durationMs / 1000} s per route in ${rounds} alternating slices after ${warmupMs / 1000} s warm-up, ` +
          `load average ${f(loadBefore, 2)} → ${f(result.machine.load_average_1m.after, 2)}`,
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
        `ratio (b)/(a): ${f(ratio, 2)}× — target ≥ ${TARGET_RATIO}×: ${result.target_met ? 'met' : 'NOT met'}`,
      );
    }
    if (errorCount > 0) {
      console.error(`hub-auth-overhead: ${errorCount} request(s) failed`);
      process.exitCode = 1;
    }
  } finally {
    if (hub && hub.child.exitCode === null) {
      hub.child.kill('SIGTERM');
      const stopped = await Promise.race([hub.exited, sleep(10_000).then(() => 'timeout')]);
      if (stopped === 'timeout') hub.child.kill('SIGKILL');
    }
    await database.drop();
  }
}

main().catch((error) => {
  console.error(`hub-auth-overhead: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
