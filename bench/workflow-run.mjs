#!/usr/bin/env node
// Invoke → completed with the reference agent and a one-stage template, against the queue's own no-op round
// trip measured in the same run.
//
//   pnpm run build && node bench/workflow-run.mjs [--runs 200] [--warmup 20] [--burst 100] [--agents 1]
//                                                [--poll 10] [--run-timeout 10] [--burst-timeout 60]
//                                                [--burst-pollers 10] [--json]
//
// Starts the built hub (`apps/hub-api/dist/main.js`, with the managed provider `local`), the built Workflow
// API (`dist/main.js`) and its worker (`dist/worker.js`) over fresh, migrated test databases and the real
// Redis under a queue prefix of their own, every process at its production defaults except that prefix and
// LOG_LEVEL=warn. Through the public APIs it bootstraps a workspace, creates a project and keys, registers a
// runtime host (kept heartbeating), registers and starts `--agents` agents (model `local/echo`) and runs one
// reference agent process (`apps/reference-agent/dist/main.js`) for each, then registers an artifact schema
// and a contract whose template has ONE stage. Then:
//   phase 1  `--runs` sequential runs after `--warmup`: POST invocation (new Idempotency-Key) → POST launch →
//            GET the invocation every `--poll` ms until `completed`; latency from just before the invoke to
//            the answer that shows `completed` (a run not completed within `--run-timeout` s fails);
//   floor    before each of those runs, one round trip of the queue itself: a BullMQ Queue and Worker (no-op
//            processor) on the same Redis under another unique prefix, add → completed seen through
//            QueueEvents; so the floor is measured in the same run, under the same conditions;
//   phase 2  `--burst` invocations invoked and launched at once, polled by `--burst-pollers` concurrent
//            pollers (each invocation at most every `--poll` ms) until all are completed or `--burst-timeout`.
// Targets: phase 1 median < 250 ms and p99 < 1 s; every invocation of the burst completes. A missed target is
// reported, not failed: the exit code is non-zero only when a request or a run fails or set-up fails.
// Processes, databases and queue keys are removed at the end, also on failure. Only 127.0.0.1 is contacted.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hubDir = path.join(root, 'apps', 'hub-api');
const workflowDir = path.join(root, 'apps', 'workflow-api');
const agentDir = path.join(root, 'apps', 'reference-agent');
const require = createRequire(import.meta.url);

const TARGET_P50_MS = 250;
const TARGET_P99_MS = 1000;
/** The engine's reconcile queue (apps/workflow-api/src/engine/queue.ts), obliterated at the end. */
const ENGINE_QUEUES = ['workflow-reconcile'];
const INTENT = 'Please write the weekly report for the bench';
const CAPABILITY = 'report';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    burst: { type: 'string', default: '100' },
    agents: { type: 'string', default: '1' },
    poll: { type: 'string', default: '10' },
    'run-timeout': { type: 'string', default: '10' },
    'burst-timeout': { type: 'string', default: '60' },
    'burst-pollers': { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});

function intBetween(value, name, min, max) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    fail(`--${name} must be an integer between ${min} and ${max}`);
  return n;
}
function seconds(value, name) {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 600) fail(`--${name} must be a number of seconds in (0, 600]`);
  return n * 1000;
}
function fail(message) {
  console.error(`workflow-run: ${message}`);
  process.exit(2);
}

const runCount = intBetween(args.runs, 'runs', 1, 100_000);
const warmupCount = intBetween(args.warmup, 'warmup', 0, 100_000);
const burstCount = intBetween(args.burst, 'burst', 1, 10_000);
const agentCount = intBetween(args.agents, 'agents', 1, 50);
const pollMs = intBetween(args.poll, 'poll', 1, 10_000);
const runTimeoutMs = seconds(args['run-timeout'], 'run-timeout');
const burstTimeoutMs = seconds(args['burst-timeout'], 'burst-timeout');
const burstPollers = intBetween(args['burst-pollers'], 'burst-pollers', 1, 1000);

function loadBuilt(file) {
  try {
    return require(file);
  } catch (error) {
    fail(`cannot load ${path.relative(root, file)} (${error.message}); run \`pnpm run build\` first`);
  }
}
for (const file of [
  path.join(hubDir, 'dist', 'main.js'),
  path.join(workflowDir, 'dist', 'main.js'),
  path.join(workflowDir, 'dist', 'worker.js'),
  path.join(agentDir, 'dist', 'main.js'),
]) {
  if (!existsSync(file)) fail(`${path.relative(root, file)} is missing; run \`pnpm run build\` first`);
}

const { createTestDatabase, freePort } = loadBuilt(
  path.join(root, 'packages', 'testing', 'dist', 'index.js'),
);
const { MIGRATIONS_DIR: HUB_MIGRATIONS } = loadBuilt(path.join(hubDir, 'dist', 'app.js'));
const { MIGRATIONS_DIR: WORKFLOW_MIGRATIONS } = loadBuilt(path.join(workflowDir, 'dist', 'app.js'));
const { Queue, QueueEvents, Worker } = createRequire(path.join(workflowDir, 'package.json'))('bullmq');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Aborted on SIGINT/SIGTERM: the measurements stop and nothing is reported. */
const interrupted = new AbortController();
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** ioredis options of a redis:// or rediss:// URL (BullMQ takes options, not a URL). */
function redisOptions(url) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    db: Number(u.pathname.slice(1) || 0),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

const TAIL_CHARS = 16_000;
const MAX_DISTINCT_LINES = 50;

/** One log line, shortened to what says what happened (pino JSON lines; other text is clipped). */
function compactLine(line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return { key: line.slice(0, 300), time: '' };
  }
  const error = entry.err ?? entry.error;
  const parts = [
    entry.level,
    entry.msg,
    entry.step && `step ${entry.step}`,
    entry.method && `${entry.method} ${entry.path} → ${entry.status}`,
    error && `${error.code ? `${error.code} ` : ''}${error.message ?? ''}`.trim(),
  ];
  return { key: parts.filter(Boolean).join(' | ').slice(0, 400), time: entry.time ?? '' };
}

/** Counts the distinct lines a process wrote (at LOG_LEVEL=warn: its warnings and errors). */
function lineCounter() {
  const lines = new Map();
  let partial = '';
  let other = 0;
  return {
    push(chunk) {
      const text = partial + chunk;
      const complete = text.split('\n');
      partial = complete.pop() ?? '';
      for (const line of complete) {
        if (!line.trim()) continue;
        const { key, time } = compactLine(line);
        const seen = lines.get(key);
        if (seen) {
          seen.count += 1;
          seen.last = time;
        } else if (lines.size < MAX_DISTINCT_LINES) {
          lines.set(key, { count: 1, first: time, last: time });
        } else {
          other += 1;
        }
      }
    },
    summary() {
      if (partial.trim()) this.push('\n');
      return { lines: [...lines.entries()].map(([key, v]) => ({ line: key, ...v })), other };
    },
  };
}

/** Runs a built entry point with only the given environment (plus PATH), keeping the tail of its output. */
function runNode(name, script, env, { captureStdout = false } = {}) {
  const child = spawn(process.execPath, [script], {
    cwd: path.dirname(path.dirname(script)),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  const counted = { stdout: lineCounter(), stderr: lineCounter() };
  child.stdout.on('data', (chunk) => {
    if (captureStdout) {
      stdout += chunk;
      return;
    }
    output = (output + chunk).slice(-TAIL_CHARS);
    counted.stdout.push(chunk);
  });
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-TAIL_CHARS);
    output = (output + chunk).slice(-TAIL_CHARS);
    counted.stderr.push(chunk);
  });
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  return {
    name,
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => output,
    /** What the process wrote, as distinct lines with their counts and first/last times. */
    lines() {
      const out = counted.stdout.summary();
      const err = counted.stderr.summary();
      return { lines: [...out.lines, ...err.lines], other: out.other + err.other };
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const stopped = await Promise.race([exited, sleep(10_000).then(() => 'timeout')]);
      if (stopped === 'timeout') {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

async function waitReady(proc, url, withinMs = 30_000) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null)
      throw new Error(`${proc.name} exited during start-up:\n${proc.output()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${proc.name} was not ready within ${withinMs / 1000} s:\n${proc.output()}`);
}

/** A failed request: the label counts failures by kind; the detail is the problem's code and title. */
class RequestFailed extends Error {
  constructor(label, detail) {
    super(`${label}${detail ? `: ${detail}` : ''}`);
    this.label = label;
    this.detail = detail;
  }
}

/** One JSON request; resolves to the answer's `data` when the status is one of `ok`. */
async function call(step, method, url, { headers = {}, body, ok = [200] } = {}) {
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new RequestFailed(`${step}: ${error?.cause?.code ?? error?.name ?? 'error'}`);
  }
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = {};
  }
  if (!ok.includes(res.status)) {
    const detail = [json.code, json.detail ?? json.title].filter(Boolean).join(' — ');
    throw new RequestFailed(`${step}: HTTP ${res.status}${json.code ? ` ${json.code}` : ''}`, detail);
  }
  return json.data;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function stats(values) {
  const sorted = Float64Array.from(values).sort();
  return {
    n: sorted.length,
    p50_ms: percentile(sorted, 50),
    p90_ms: percentile(sorted, 90),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

function median(values) {
  return percentile(Float64Array.from(values).sort(), 50);
}

/** Failures counted by label, plus the first few in detail. */
function failureLog() {
  const counts = new Map();
  const examples = [];
  return {
    add(label, detail) {
      counts.set(label, (counts.get(label) ?? 0) + 1);
      if (examples.length < 5) examples.push(detail ? `${label}: ${detail}` : label);
    },
    get total() {
      return [...counts.values()].reduce((a, b) => a + b, 0);
    },
    toJSON() {
      return { counts: Object.fromEntries(counts), examples };
    },
  };
}

/** Where the time of one completed run went, from the invocation's own timestamps (same machine clock). */
function timeline(view, seenAtEpochMs) {
  const stage = view.stages?.[0];
  const at = (value) => (value ? Date.parse(value) : NaN);
  const created = at(view.created_at);
  const assigned = at(stage?.assigned_at);
  const claimed = at(stage?.claimed_at);
  const published = at(view.artifact?.created_at);
  return {
    created_to_assigned_ms: assigned - created,
    assigned_to_claimed_ms: claimed - assigned,
    claimed_to_artifact_ms: published - claimed,
    artifact_to_seen_ms: seenAtEpochMs - published,
  };
}

/** The median of each segment of `timeline()` over these runs. */
function timelineMedians(items) {
  return {
    created_to_assigned_ms: median(items.map((r) => r.created_to_assigned_ms)),
    assigned_to_claimed_ms: median(items.map((r) => r.assigned_to_claimed_ms)),
    claimed_to_artifact_ms: median(items.map((r) => r.claimed_to_artifact_ms)),
    artifact_to_seen_ms: median(items.map((r) => r.artifact_to_seen_ms)),
  };
}

/** The state of an invocation a failure report needs, never more. */
function describeView(view) {
  if (!view) return 'no answer yet';
  const stages = (view.stages ?? [])
    .map(
      (s) =>
        `${s.key}:${s.state}${s.owner_agent_id ? '@owned' : ''}${s.blocker_reason ? ` (${s.blocker_reason})` : ''}`,
    )
    .join(', ');
  return (
    `state ${view.state}, attention ${view.attention}` +
    `${view.attention_reason ? ` (${view.attention_reason})` : ''}, stages [${stages}]` +
    `${view.artifact ? ', artifact published' : ''}`
  );
}

/**
 * Starts the hub, the Workflow API, its worker and the reference agents, and seeds one route. Every process
 * goes into `procs` and every clean-up step into `cleanup` as soon as it exists, so a failure half-way leaves
 * nothing behind. Resolves to what the measurements need: the invocations URL and the key's header.
 */
async function startStack(procs, cleanup) {
  const [hubDb, wfDb] = await Promise.all([
    createTestDatabase({ migrationsDir: HUB_MIGRATIONS, prefix: 'svc_hub_bench' }),
    createTestDatabase({ migrationsDir: WORKFLOW_MIGRATIONS, prefix: 'svc_workflow_bench' }),
  ]);
  cleanup.push(() => Promise.all([hubDb.drop(), wfDb.drop()]));

  // The hub: bootstrap a workspace and its owner, then serve.
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const password = randomBytes(18).toString('base64url');
  const bootstrap = runNode(
    'hub bootstrap',
    path.join(hubDir, 'dist', 'bootstrap.js'),
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
  const [hubPort, wfPort, workerPort] = [await freePort(), await freePort(), await freePort()];
  const hubUrl = `http://127.0.0.1:${hubPort}`;
  const wfUrl = `http://127.0.0.1:${wfPort}`;
  const hub = runNode('hub', path.join(hubDir, 'dist', 'main.js'), {
    HUB_HOST: '127.0.0.1',
    HUB_PORT: String(hubPort),
    HUB_PUBLIC_URL: hubUrl,
    DATABASE_URL: hubDb.url,
    HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    HUB_SERVICE_TOKEN: serviceToken,
    HUB_MANAGED_PROVIDERS: 'local',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  });
  procs.push(hub);

  // The Workflow API and its worker: production defaults but for their own queue prefix.
  const queuePrefix = `bench${randomBytes(4).toString('hex')}`;
  const wfEnv = {
    WORKFLOW_HOST: '127.0.0.1',
    WORKFLOW_PORT: String(wfPort),
    WORKFLOW_WORKER_PORT: String(workerPort),
    WORKFLOW_PUBLIC_URL: wfUrl,
    WORKFLOW_QUEUE_PREFIX: queuePrefix,
    DATABASE_URL: wfDb.url,
    REDIS_URL: redisUrl,
    HUB_URL: hubUrl,
    HUB_SERVICE_TOKEN: serviceToken,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  cleanup.push(() => obliterate(queuePrefix, ENGINE_QUEUES));
  const api = runNode('workflow API', path.join(workflowDir, 'dist', 'main.js'), wfEnv);
  procs.push(api);
  const worker = runNode('workflow worker', path.join(workflowDir, 'dist', 'worker.js'), wfEnv);
  procs.push(worker);
  await Promise.all([
    waitReady(hub, `${hubUrl}/readyz`),
    waitReady(api, `${wfUrl}/readyz`),
    waitReady(worker, `http://127.0.0.1:${workerPort}/readyz`),
  ]);

  // Workspace, project and keys through the hub's public API.
  const session = await call('login', 'POST', `${hubUrl}/api/v1/auth/login`, { body: { email, password } });
  const owner = { authorization: `Bearer ${session.token}` };
  const ws = `${hubUrl}/api/v1/workspaces/${workspace.slug}`;
  const project = await call('create project', 'POST', `${ws}/projects`, {
    headers: owner,
    body: { code: 'BENCH', name: 'Bench' },
    ok: [201],
  });
  const newKey = async (name, scopes) =>
    (
      await call('create key', 'POST', `${ws}/api-keys`, {
        headers: owner,
        body: { name, scopes },
        ok: [201],
      })
    ).key;
  const benchKey = await newKey('bench', [
    'workflows:run',
    'workflows:read',
    'workflow-contracts:read',
    'workflow-contracts:write',
    'artifact-schemas:write',
  ]);
  const hostKey = await newKey('bench host', ['runtime-hosts:write']);

  // A runtime host, heartbeating like a live one.
  const host = await call('register runtime host', 'POST', `${ws}/runtime-hosts`, {
    headers: owner,
    body: {
      name: 'bench-host',
      hostname: 'runtime-1.internal',
      workdir_root: '/srv/agents',
      console_public_base_url: 'https://console.example.test',
      relay_public_url: 'https://relay.example.test',
    },
    ok: [201],
  });
  const hostId = host.host?.id ?? host.id;
  const beatHost = () =>
    call('host heartbeat', 'POST', `${hubUrl}/api/v1/runtime-hosts/${hostId}/heartbeat`, {
      headers: { 'x-api-key': hostKey },
      body: { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' },
    });
  await beatHost();
  const hostBeat = setInterval(() => void beatHost().catch(() => undefined), 20_000);
  cleanup.push(() => clearInterval(hostBeat));

  // The agents: registered and started at the hub, each worked by a reference agent process.
  for (let i = 1; i <= agentCount; i += 1) {
    const registered = await call('register agent', 'POST', `${ws}/agents`, {
      headers: owner,
      body: {
        name: `bench-agent-${i}`,
        runtime_instance_id: hostId,
        capabilities: [CAPABILITY],
        project_code: project.code,
        model: 'local/echo',
      },
      ok: [201],
    });
    const agentId = registered.agent?.id ?? registered.id;
    const started = await call('start agent', 'POST', `${hubUrl}/api/v1/agents/${agentId}/start`, {
      headers: owner,
      body: { launch_path: 'direct' },
      ok: [200, 201],
    });
    const agent = runNode(`reference agent ${i}`, path.join(agentDir, 'dist', 'main.js'), {
      AGENT_TOKEN: started.agent_token,
      HUB_URL: hubUrl,
      WORKFLOW_URL: wfUrl,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    });
    procs.push(agent);
    await waitHeartbeat(agent, `${hubUrl}/api/v1/agents/${agentId}`, owner);
  }

  // One route: an artifact schema and a contract whose template has one stage.
  const wfKey = { 'x-api-key': benchKey };
  await call(
    'register artifact schema',
    'POST',
    `${wfUrl}/api/v1/workspaces/${workspace.id}/artifact-schemas`,
    {
      headers: wfKey,
      body: { project_id: project.id, name: 'bench-report', version: '1.0.0', json_schema: REPORT_SCHEMA },
      ok: [201],
    },
  );
  const projectBase = `${wfUrl}/api/v1/projects/${project.id}/workflow`;
  await call('create contract', 'POST', `${projectBase}/contracts`, {
    headers: wfKey,
    body: {
      name: 'Weekly report',
      priority: 10,
      fallback: false,
      is_active: true,
      classifier: { intentContains: ['weekly report'] },
      template: {
        key: 'bench-report-flow',
        version: '1.0.0',
        required_capabilities: [],
        artifact_schema: { name: 'bench-report', version: '1.0.0' },
        guardrails: { human_approval_required: false },
        stages: [{ key: 'write', title: 'Write the report', required_capabilities: [CAPABILITY] }],
      },
    },
    ok: [201],
  });
  const preflight = await call('preflight', 'POST', `${projectBase}/preflight`, {
    headers: wfKey,
    body: { intent: INTENT },
  });
  if (preflight.can_launch !== true) {
    throw new Error(
      `preflight says the route cannot launch: ${JSON.stringify(preflight.blockers?.map((b) => b.code) ?? preflight)}`,
    );
  }
  return { invocations: `${projectBase}/invocations`, headers: wfKey };
}

/** The Workflow API calls of a run over one key, and phase 1's unit built from them. */
function runClient({ invocations, headers }) {
  let sequence = 0;
  /** Invoke and launch one invocation; resolves to its id and the two round trips. */
  async function invokeAndLaunch() {
    sequence += 1;
    const invoked = await call('invoke', 'POST', invocations, {
      headers: {
        ...headers,
        'idempotency-key': `bench-run-${process.pid}-${sequence}-${randomBytes(4).toString('hex')}`,
      },
      body: { intent: INTENT },
      ok: [201],
    });
    const t1 = performance.now();
    await call('launch', 'POST', `${invocations}/${invoked.invocation_id}/launch`, {
      headers,
      ok: [200, 202],
    });
    return { id: invoked.invocation_id, launchedAt: t1, launchDoneAt: performance.now() };
  }
  const getInvocation = (id) => call('get invocation', 'GET', `${invocations}/${id}`, { headers });

  /** Phase 1's unit: invoke → launch → poll until completed. Throws RequestFailed on any failure. */
  async function oneRun() {
    const t0 = performance.now();
    const { id, launchedAt, launchDoneAt } = await invokeAndLaunch();
    const deadline = t0 + runTimeoutMs;
    let polls = 0;
    let view;
    for (;;) {
      const pollStarted = performance.now();
      view = await getInvocation(id);
      polls += 1;
      if (view.state === 'completed') {
        const ms = performance.now() - t0;
        return {
          ms,
          invoke_ms: launchedAt - t0,
          launch_ms: launchDoneAt - launchedAt,
          polls,
          ...timeline(view, Date.now()),
        };
      }
      if (view.state === 'failed' || view.state === 'cancelled') {
        throw new RequestFailed(`run ended ${view.state}`, `${id}: ${describeView(view)}`);
      }
      if (performance.now() >= deadline) {
        throw new RequestFailed(
          `run not completed within ${runTimeoutMs / 1000} s (last state ${view.state})`,
          `${id}: ${describeView(view)}`,
        );
      }
      const wait = pollStarted + pollMs - performance.now();
      if (wait > 0) await sleep(wait);
    }
  }

  return { invokeAndLaunch, getInvocation, oneRun };
}

/**
 * `count` sequential runs, each preceded by one no-op round trip of the floor queue, so that the floor is
 * measured under the same conditions as the runs; failures are counted, never thrown.
 */
async function sequentialRuns(client, floor, count) {
  const failures = failureLog();
  const runs = [];
  const floorMs = [];
  let busyMs = 0;
  for (let i = 0; i < count && !interrupted.signal.aborted; i += 1) {
    const roundTrip = await floor.roundTrip();
    if (roundTrip !== undefined) floorMs.push(roundTrip);
    const started = performance.now();
    if (interrupted.signal.aborted) break;
    try {
      runs.push(await client.oneRun());
    } catch (error) {
      failures.add(error.label ?? String(error?.message ?? error), error.detail);
    }
    busyMs += performance.now() - started;
  }
  return { runs, failures, floorMs, wallMs: busyMs };
}

async function main() {
  const cleanup = [];
  const procs = [];
  let reported = false;
  let tearingDown;
  /** Stops every process, then runs the clean-up steps (newest first); once, whoever asks first. */
  const tearDown = () =>
    (tearingDown ??= (async () => {
      await Promise.all(procs.map((proc) => proc.stop().catch(() => undefined)));
      for (const step of cleanup.reverse()) {
        try {
          await step();
        } catch (error) {
          console.error(
            `workflow-run: clean-up step failed: ${error instanceof Error ? error.message : error}`,
          );
          process.exitCode = 1;
        }
      }
    })());
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      interrupted.abort();
      console.error(
        `workflow-run: ${signal}; stopping the processes and removing the databases and queue keys`,
      );
      void tearDown().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  try {
    const client = runClient(await startStack(procs, cleanup));
    const loadBefore = os.loadavg()[0];
    // Phase 1 (after its warm-up) with the floor's round trips between its runs, then the burst.
    const floor = await openFloor();
    cleanup.push(() => floor.close());
    const warmup = await sequentialRuns(client, floor, warmupCount);
    const sequential = await sequentialRuns(client, floor, runCount);
    if (interrupted.signal.aborted) return;
    await sleep(500);
    const burst = await runBurst(client);
    const loadAfter = os.loadavg()[0];
    if (interrupted.signal.aborted) return;

    const crashed = procs.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    const logs = [floor.failures, warmup.failures, sequential.failures, burst.failures];
    const errorCount = logs.reduce((sum, log) => sum + log.total, 0);
    const result = buildResult({
      loadBefore,
      loadAfter,
      warmup,
      floor,
      sequential,
      burst,
      crashed,
      errorCount,
    });
    result.process_logs = Object.fromEntries(
      procs.map((proc) => [proc.name, proc.lines()]).filter(([, logs]) => logs.lines.length > 0),
    );
    if (args.json) console.log(JSON.stringify(result, null, 2));
    else printTable(result);
    if (errorCount > 0 || crashed.length > 0) {
      reported = true;
      console.error(
        `workflow-run: ${errorCount} request(s) or run(s) failed` +
          `${crashed.length ? `; exited early: ${crashed.map((p) => p.name).join(', ')}` : ''}`,
      );
      for (const log of logs) for (const example of log.toJSON().examples) console.error(`  ${example}`);
      printOutputs(procs);
      process.exitCode = 1;
    }
  } catch (error) {
    if (interrupted.signal.aborted) return;
    if (!reported) printOutputs(procs);
    throw error;
  } finally {
    await tearDown();
  }
}

function buildResult({ loadBefore, loadAfter, warmup, floor, sequential, burst, crashed, errorCount }) {
  const { runs } = sequential;
  const phase1 = stats(runs.map((r) => r.ms));
  const floorStats = stats(sequential.floorMs);
  return {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model ?? 'unknown',
      node: process.version,
      load_average_1m: { before: loadBefore, after: loadAfter },
    },
    settings: {
      runs: runCount,
      warmup: warmupCount,
      burst: burstCount,
      agents: agentCount,
      poll_ms: pollMs,
      run_timeout_s: runTimeoutMs / 1000,
      burst_timeout_s: burstTimeoutMs / 1000,
      burst_pollers: burstPollers,
      engine_env: 'production defaults, WORKFLOW_QUEUE_PREFIX unique, LOG_LEVEL=warn (all processes)',
    },
    floor: { ...floorStats, failures: floor.failures },
    phase1: {
      ...phase1,
      wall_s: sequential.wallMs / 1000,
      failures: sequential.failures,
      warmup_failures: warmup.failures,
    },
    phase1_breakdown_p50_ms: {
      invoke_ms: median(runs.map((r) => r.invoke_ms)),
      launch_ms: median(runs.map((r) => r.launch_ms)),
      ...timelineMedians(runs),
      polls: median(runs.map((r) => r.polls)),
    },
    phase2_breakdown_p50_ms: timelineMedians(burst.timelines),
    phase2: {
      invoked: burstCount,
      completed: burst.completed,
      wall_s: burst.wallMs / 1000,
      ...stats(burst.latencies),
      failures: burst.failures,
    },
    ratio_to_floor: {
      phase1_p50: phase1.p50_ms / floorStats.p50_ms,
      phase2_p50: median(burst.latencies) / floorStats.p50_ms,
    },
    targets: { phase1_p50_ms: TARGET_P50_MS, phase1_p99_ms: TARGET_P99_MS, burst_all_complete: burstCount },
    targets_met: {
      phase1_p50: phase1.p50_ms < TARGET_P50_MS,
      phase1_p99: phase1.p99_ms < TARGET_P99_MS,
      burst_all_complete: burst.completed === burstCount,
    },
    processes_exited: crashed.map((p) => p.name),
    errors: errorCount,
  };
}

/** What each process wrote (warnings and errors only at LOG_LEVEL=warn), as distinct lines with counts. */
function printOutputs(procs) {
  for (const proc of procs) {
    const { lines, other } = proc.lines();
    if (lines.length === 0) continue;
    const state = proc.child.exitCode !== null || proc.child.signalCode !== null ? ' (exited)' : '';
    const total = lines.reduce((sum, l) => sum + l.count, other);
    console.error(`--- ${proc.name}${state}: ${total} log line(s), ${lines.length} distinct`);
    for (const l of lines) {
      const when = l.count > 1 ? `${l.first} … ${l.last}` : l.first;
      console.error(`  ×${l.count} ${when} ${l.line}`);
    }
    if (other > 0) console.error(`  and ${other} more line(s) of other kinds`);
  }
}

/** Waits until the hub has seen the agent's first heartbeat. */
async function waitHeartbeat(agent, url, headers) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (agent.child.exitCode !== null)
      throw new Error(`${agent.name} exited during start-up:\n${agent.output()}`);
    const seen = (await call('get agent', 'GET', url, { headers }))?.last_heartbeat_at;
    if (seen && Date.parse(seen) > Date.now() - 10_000) return;
    await sleep(100);
  }
  throw new Error(`${agent.name} sent no heartbeat within 20 s:\n${agent.output()}`);
}

/**
 * The floor: a BullMQ Queue, QueueEvents and a Worker with a no-op processor on the same Redis under a prefix
 * of their own. `roundTrip()` adds one job and resolves to the milliseconds until its completion is seen
 * through QueueEvents (undefined when it failed; failures are counted).
 */
async function openFloor() {
  const connection = redisOptions(redisUrl);
  const prefix = `benchfloor${randomBytes(4).toString('hex')}`;
  const name = 'bench-floor';
  const queue = new Queue(name, { connection, prefix });
  const events = new QueueEvents(name, { connection, prefix });
  const worker = new Worker(name, async () => null, { connection, prefix, concurrency: 1 });
  const failures = failureLog();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.allSettled([worker.close(), events.close()]);
    await queue.close();
    await obliterate(prefix, [name]);
  };
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker.waitUntilReady()]);
  } catch (error) {
    await close();
    throw error;
  }
  let sequence = 0;
  return {
    failures,
    async roundTrip() {
      sequence += 1;
      const t0 = performance.now();
      try {
        const job = await queue.add('noop', { sequence });
        await job.waitUntilFinished(events, 5_000);
        return performance.now() - t0;
      } catch (error) {
        failures.add(`floor round trip: ${error?.message ?? error}`);
        return undefined;
      }
    },
    close,
  };
}

/** Invokes and launches `burstCount` at once, then polls them with `burstPollers` pollers until done. */
async function runBurst({ invokeAndLaunch, getInvocation }) {
  const failures = failureLog();
  const latencies = [];
  const timelines = [];
  const pending = new Map();
  let launching = burstCount;
  const t0 = performance.now();
  const deadline = t0 + burstTimeoutMs;
  let lastDone = t0;
  const launches = Array.from({ length: burstCount }, async () => {
    const start = performance.now();
    try {
      const { id } = await invokeAndLaunch();
      pending.set(id, { id, start, nextPoll: performance.now(), inFlight: false, view: undefined });
    } catch (error) {
      failures.add(error.label ?? String(error?.message ?? error), error.detail);
    } finally {
      launching -= 1;
    }
  });
  /** The pending invocation not being polled whose next poll is due first. */
  const nextItem = () => {
    let best;
    for (const item of pending.values()) {
      if (!item.inFlight && (!best || item.nextPoll < best.nextPoll)) best = item;
    }
    return best;
  };
  async function poller() {
    while (
      (launching > 0 || pending.size > 0) &&
      performance.now() < deadline &&
      !interrupted.signal.aborted
    ) {
      const item = nextItem();
      if (!item) {
        await sleep(1);
        continue;
      }
      const wait = item.nextPoll - performance.now();
      if (wait > 0) {
        await sleep(Math.min(wait, 5));
        continue;
      }
      item.inFlight = true;
      item.nextPoll = performance.now() + pollMs;
      try {
        const view = await getInvocation(item.id);
        item.view = view;
        if (view.state === 'completed') {
          lastDone = performance.now();
          latencies.push(lastDone - item.start);
          timelines.push(timeline(view, Date.now()));
          pending.delete(item.id);
        } else if (view.state === 'failed' || view.state === 'cancelled') {
          failures.add(`run ended ${view.state}`, `${item.id}: ${describeView(view)}`);
          pending.delete(item.id);
        }
      } catch (error) {
        failures.add(error.label ?? String(error?.message ?? error), error.detail);
        pending.delete(item.id);
      } finally {
        item.inFlight = false;
      }
    }
  }
  await Promise.all([...launches, ...Array.from({ length: burstPollers }, poller)]);
  for (const item of pending.values()) {
    failures.add(
      `run not completed within the burst's ${burstTimeoutMs / 1000} s (last state ${item.view?.state ?? 'unknown'})`,
      `${item.id}: ${describeView(item.view)}`,
    );
  }
  const wallMs = (pending.size > 0 ? performance.now() : lastDone) - t0;
  return { completed: latencies.length, latencies, timelines, wallMs, failures };
}

/** Removes every key of these queues under `prefix`, then any key of the prefix left over. */
async function obliterate(prefix, names) {
  const connection = redisOptions(redisUrl);
  for (const name of names) {
    const queue = new Queue(name, { connection, prefix });
    try {
      await queue.obliterate({ force: true });
      const client = await queue.getBackend().client;
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await client.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      await queue.close();
    }
  }
}

const REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['title', 'summary', 'items'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    summary: { type: 'string', minLength: 1 },
    items: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['name', 'score'],
        additionalProperties: false,
        properties: { name: { type: 'string' }, score: { type: 'integer', minimum: 0, maximum: 100 } },
      },
    },
  },
};

function printTable(result) {
  const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const errs = (log) =>
    Object.entries(log.toJSON().counts)
      .map(([k, v]) => `${k} ×${v}`)
      .join('; ') || '0';
  const { floor, phase1, phase2 } = result;
  console.log(
    `workflow run — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
      `${agentCount} reference agent(s), one-stage template, engine at production defaults with its own queue ` +
      `prefix, LOG_LEVEL=warn for every process; ${runCount} runs after ${warmupCount} warm-up, burst of ` +
      `${burstCount}, polling every ${pollMs} ms, one floor round trip before each run; load average ${f(result.machine.load_average_1m.before, 2)} → ` +
      `${f(result.machine.load_average_1m.after, 2)}`,
  );
  console.log('');
  console.log('| measurement | completed | p50 ms | p90 ms | p99 ms | max ms | p50 / floor | failures |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  const row = (name, s, ratio, failures) =>
    console.log(
      `| ${name} | ${s.n} | ${f(s.p50_ms, 2)} | ${f(s.p90_ms, 2)} | ${f(s.p99_ms, 2)} | ${f(s.max_ms, 2)} | ` +
        `${ratio} | ${errs(failures)} |`,
    );
  row('floor: BullMQ add → completed, no-op job', floor, '1.0×', floor.failures);
  row(
    'phase 1: invoke → completed, one at a time',
    phase1,
    `${f(result.ratio_to_floor.phase1_p50, 1)}×`,
    phase1.failures,
  );
  row(
    `phase 2: invoke → completed, ${burstCount} at once`,
    phase2,
    `${f(result.ratio_to_floor.phase2_p50, 1)}×`,
    phase2.failures,
  );
  console.log('');
  const b = result.phase1_breakdown_p50_ms;
  console.log(
    `phase 1 medians: invoke ${f(b.invoke_ms, 1)} ms, launch ${f(b.launch_ms, 1)} ms; from the invocation's ` +
      `timestamps: created → stage assigned ${f(b.created_to_assigned_ms, 0)} ms, assigned → claimed ` +
      `${f(b.assigned_to_claimed_ms, 0)} ms, claimed → artifact ${f(b.claimed_to_artifact_ms, 0)} ms, ` +
      `artifact → seen ${f(b.artifact_to_seen_ms, 0)} ms; ${f(b.polls, 0)} polls per run`,
  );
  if (phase1.warmup_failures.total > 0) console.log(`warm-up failures: ${errs(phase1.warmup_failures)}`);
  const b2 = result.phase2_breakdown_p50_ms;
  console.log(
    `phase 2: ${phase2.completed}/${phase2.invoked} completed in ${f(phase2.wall_s, 2)} s ` +
      `(${f(phase2.completed / phase2.wall_s, 1)} runs/s); medians: created → stage assigned ` +
      `${f(b2.created_to_assigned_ms, 0)} ms, assigned → claimed ${f(b2.assigned_to_claimed_ms, 0)} ms, ` +
      `claimed → artifact ${f(b2.claimed_to_artifact_ms, 0)} ms, artifact → seen ${f(b2.artifact_to_seen_ms, 0)} ms`,
  );
  console.log('');
  const met = (ok) => (ok ? 'met' : 'NOT met');
  console.log(
    `phase 1 median ${f(phase1.p50_ms, 1)} ms — target < ${TARGET_P50_MS} ms: ${met(result.targets_met.phase1_p50)}`,
  );
  console.log(
    `phase 1 p99 ${f(phase1.p99_ms, 1)} ms — target < ${TARGET_P99_MS} ms: ${met(result.targets_met.phase1_p99)}`,
  );
  console.log(
    `phase 2 ${phase2.completed}/${burstCount} completed — target all: ${met(result.targets_met.burst_all_complete)}`,
  );
}

main().catch((error) => {
  console.error(`workflow-run: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
