#!/usr/bin/env node
// Invoke → completed with the reference agent and a one-stage template, against the queue's own no-op round
// trip measured in the same run.
// One file because the stack, the floor and both phases are one sequence over the same processes and key;
// the report is a module in workflow-run/.
//
//   pnpm run build && node bench/workflow-run.mjs [--runs 200] [--warmup 20] [--burst 100] [--agents 1]
//                                                [--poll 10] [--run-timeout 10] [--burst-timeout 60]
//                                                [--burst-pollers 10] [--cpu-prof DIR] [--json]
//
// Starts the built hub (`apps/hub-api/dist/main.js`, with the managed provider `local`), the built Workflow
// API (`dist/main.js`) and its worker (`dist/worker-main.js`) over fresh, migrated test databases and the real
// Redis under a queue prefix of their own, every process at its production defaults except that prefix and
// LOG_LEVEL=warn. Through the public APIs it bootstraps a workspace, creates a project and keys, registers a
// runtime host (kept heartbeating), registers and starts `--agents` agents (model `local/echo`) and runs one
// reference agent process (`apps/reference-agent/dist/main.js`) for each, then registers an artifact schema
// and a contract whose template has ONE stage. Then:
//   phase 1  `--runs` sequential runs after `--warmup`: POST invocation (new Idempotency-Key) → POST launch →
//            GET the invocation every `--poll` ms (with `--wait`, each read held until its state changes) until
//            `completed`; latency from just before the invoke to the answer that shows `completed` (a run not
//            completed within `--run-timeout` s fails);
//   floor    before each of those runs, one round trip of the queue itself: a BullMQ Queue and Worker (no-op
//            processor) on the same Redis under another unique prefix, add → completed seen through
//            QueueEvents; so the floor is measured in the same run, under the same conditions;
//   phase 2  `--burst` invocations invoked and launched at once, polled by `--burst-pollers` concurrent
//            pollers (each invocation at most every `--poll` ms) until all are completed or `--burst-timeout`.
// Each phase is also priced: CPU per run of every process (hub, Workflow API, worker, the agents, the Postgres
// backends of each database, Redis, this bench — phase 1's includes the floor's round trips), and the
// statements, transactions and HTTP requests per run the services counted (their /metrics). `--cpu-prof DIR`
// makes the hub, the Workflow API, the worker and the agents write CPU profiles into DIR when they stop.
// Scale-out: `--apis N --workers N` (and `--hubs N`) run the same phases over that many replicas behind
// HAProxy (the harness's `startRunStack`); `--compare-replicas` runs only the warm-up and the burst, first
// with one Workflow API and one worker and then with `--apis`/`--workers` (2 and 2 unless given), one stack
// after the other, every configuration behind HAProxy (one replica too: a deployment scales out behind the
// balancer it already has), and prints their runs/s and the machine's CPU left idle (/proc/stat) side by side.
// Targets: phase 1 median < 250 ms and p99 < 1 s; every invocation of the burst completes; with
// `--compare-replicas`, more replicas are never slower and turn at least half the CPU one replica left idle
// into throughput. A missed target is
// reported, not failed: the exit code is non-zero only when a request or a run fails or set-up fails.
// Processes, databases and queue keys are removed at the end, also on failure. Only 127.0.0.1 is contacted.
import os from 'node:os';
import path from 'node:path';
import { assertBuilt, benchCli, fail, run, testing } from './harness/cli.mjs';
import { openCostMeter, printCost } from './harness/cost.mjs';
import { failureLog, machine, printResult } from './harness/report.mjs';
import { fairness } from './workflow-run/fairness.mjs';
import { INTENT, call, runClient } from './workflow-run/client.mjs';
import { startProjectThread } from './workflow-run/project-thread.mjs';
import { runBurst } from './workflow-run/runs.mjs';
import { configLabel, printScaleout, scaleoutEntry, scaleoutTargets } from './workflow-run/scaleout.mjs';
import { noopQueue } from './harness/queues.mjs';
import {
  DEPLOYED_NODE_OPTIONS,
  cleanupStack,
  cpuProfileArgs,
  createBenchWorkspace,
  redisUrl,
  reportCpuProfiles,
} from './harness/stack.mjs';
import { buildResult, printReport } from './workflow-run/report.mjs';
import {
  REPORT_CAPABILITY,
  createBenchDatabases,
  createReportRoute,
  startReplicatedRunStack,
  startWorkflowStack,
} from './harness/workflow-stack.mjs';

/** The engine's reconcile queue (apps/workflow-api/src/data/reconcile.queue.ts), obliterated at the end. */
const ENGINE_QUEUES = ['workflow-reconcile'];

const options = benchCli('workflow-run', ({ flag, int, seconds, text }) => ({
  runs: int('200', 1, 100_000),
  warmup: int('20', 0, 100_000),
  burst: int('100', 1, 10_000),
  agents: int('1', 1, 50),
  poll: int('10', 1, 10_000),
  'run-timeout': seconds('10'),
  'burst-timeout': seconds('60'),
  'burst-pollers': int('10', 1, 1000),
  wait: int('0', 0, 60),
  'cpu-prof': text(),
  fairness: flag(),
  hubs: int('1', 1, 8),
  apis: int('1', 1, 8),
  workers: int('1', 1, 8),
  'compare-replicas': flag(),
  'node-options': text(),
  json: flag(),
}));
const { runs: runCount, warmup: warmupCount, burst: burstCount, agents: agentCount, poll: pollMs } = options;
const runTimeoutMs = options['run-timeout'];
/** How a project's client runs one run at a time. */
const runSettings = { runTimeoutMs, pollMs, waitS: options.wait };
const burstTimeoutMs = options['burst-timeout'];
const burstPollers = options['burst-pollers'];
const profileDir = options['cpu-prof'] ? path.resolve(options['cpu-prof']) : undefined;
/** Node's options for the hub, the Workflow API and the worker: as deployed unless given (`--node-options ''`: Node's own). */
const nodeOptions = (options['node-options'] ?? DEPLOYED_NODE_OPTIONS).split(/\s+/).filter(Boolean);
const serviceArgs = () => [...nodeOptions, ...cpuProfileArgs(profileDir)];
const compare = options['compare-replicas'];
/** The replicated stack of `--apis`/`--workers`/`--hubs` (2 and 2 with `--compare-replicas` when not given). */
const scaled =
  compare && options.apis === 1 && options.workers === 1
    ? { hubs: options.hubs, apis: 2, workers: 2 }
    : { hubs: options.hubs, apis: options.apis, workers: options.workers };
const replicated = (config) => config.hubs > 1 || config.apis > 1 || config.workers > 1;
if (options.fairness && (compare || replicated(scaled)))
  fail('--fairness runs on one hub, Workflow API and worker; leave out --compare-replicas and the counts');
/** The settings as the report states them. */
const settings = {
  runs: runCount,
  warmup: warmupCount,
  burst: burstCount,
  agents: agentCount,
  poll_ms: pollMs,
  run_timeout_s: runTimeoutMs / 1000,
  burst_timeout_s: burstTimeoutMs / 1000,
  burst_pollers: burstPollers,
  burst_wait_s: options.wait,
  engine_env: 'production defaults, WORKFLOW_QUEUE_PREFIX unique, LOG_LEVEL=warn (all processes)',
  replicas: compare ? [{ hubs: options.hubs, apis: 1, workers: 1 }, scaled] : [scaled],
};

assertBuilt([
  'apps/hub-api/dist/main.js',
  'apps/workflow-api/dist/main.js',
  'apps/workflow-api/dist/worker-main.js',
  'apps/reference-agent/dist/main.js',
]);
const harness = testing();
const { sleep, uniqueQueuePrefix } = harness;

const teardown = cleanupStack(
  'workflow-run',
  'stopping the processes and removing the databases and queue keys',
);
/** Aborted on SIGINT/SIGTERM: the measurements stop and nothing is reported. */
const interrupted = teardown.interrupted;

/**
 * Starts the hub, the Workflow API, its worker and the reference agents, and seeds one route. Every process
 * and every clean-up step is registered as soon as it exists, so a failure half-way leaves nothing behind.
 * Resolves to what the measurements need: the invocations URL and the key's header.
 */
/** What the bench wires itself (addresses, tokens, keys, queue prefixes): never taken from its environment. */
const WIRING = /(?:_HOST|_PORT|_URL|_TOKEN|_ISSUER|_PREFIX|_KEYS|_SEALED)$/;

/**
 * The services' tuning settings from the bench's environment (`WORKFLOW_*` to the Workflow API and its worker,
 * `HUB_*` to the hub; not their wiring), so a setting is compared without a rebuild:
 * `WORKFLOW_ROSTER_MAX_AGE_MS=0 node bench/workflow-run.mjs`.
 */
function settingsFromEnvironment(prefix) {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key.startsWith(prefix) && !WIRING.test(key)),
  );
}

async function startStack() {
  const databases = await createBenchDatabases(teardown);
  // The Workflow API and its worker: production defaults but for their own queue prefix.
  const production = { NODE_ENV: 'production' };
  const nodeArgs = cpuProfileArgs(profileDir);
  const { hub, wf, api, worker } = await startWorkflowStack(teardown, {
    databases,
    queuePrefix: uniqueQueuePrefix('bench'),
    queues: ENGINE_QUEUES,
    names: { hub: 'hub', api: 'workflow API', worker: 'workflow worker' },
    hubEnv: { HUB_MANAGED_PROVIDERS: 'local', ...settingsFromEnvironment('HUB_'), ...production },
    workflowEnv: { ...settingsFromEnvironment('WORKFLOW_'), ...production },
    process: { nodeArgs: serviceArgs() },
  });

  // Workspace, project and keys through the hub's public API.
  const owner = await createBenchWorkspace(hub.url, databases.hubDb.url);
  // A runtime host, heartbeating like a live one.
  const host = await harness.registerLiveRuntimeHost(owner, 'bench-host');
  teardown.push(() => host.stop());
  const agents = [];
  const main = await setUpProject({ owner, host, wf, nodeArgs, production, agents, code: 'BENCH' });
  // With --fairness, a second project B with one agent of its own, measured one run at a time.
  const other = options.fairness
    ? await setUpProject({ owner, host, wf, nodeArgs, production, agents, code: 'BENCHB', agentCount: 1 })
    : null;
  const meter = await openCostMeter({
    processes: {
      hub: () => [hub.process.child.pid],
      'workflow API': () => [api.child.pid],
      worker: () => [worker.child.pid],
      agents: () => agents.map((proc) => proc.child.pid),
    },
    databases: { hub: databases.hubDb.url, workflow: databases.wfDb.url },
    services: {
      hub: `${hub.url}/metrics`,
      'workflow API': `${wf.url}/metrics`,
      worker: `${wf.workerUrl}/metrics`,
    },
    redisUrl,
  });
  teardown.push(() => meter.close());
  const profiled = [hub.process, api, worker, ...agents];
  return { client: main, other, meter, profiled, procs: teardown.procs };
}

/**
 * `config.hubs` hubs, `config.apis` Workflow APIs and `config.workers` workers through the harness's
 * `startRunStack` (HAProxy in front when a count is above one), production defaults and `--agents` agents,
 * metered like {@link startStack}'s; `close()` takes it down before the next configuration starts.
 */
async function startReplicated(config) {
  const production = { NODE_ENV: 'production' };
  const started = await startReplicatedRunStack(teardown, {
    ...config,
    // Compared replica counts sit behind the same balancer, as a deployment scales out behind its own.
    balancer: compare,
    agents: agentCount,
    intent: 'weekly report',
    env: { ...settingsFromEnvironment('WORKFLOW_'), ...production },
    hubEnv: { ...settingsFromEnvironment('HUB_'), ...production },
    agentEnv: production,
    process: { nodeArgs: serviceArgs() },
  });
  await checkPreflight(started.project);
  const meter = await openCostMeter({
    processes: started.processes,
    databases: started.databases,
    services: started.metrics,
    redisUrl,
  });
  let meterClosed;
  const closeMeter = () => (meterClosed ??= meter.close());
  teardown.push(closeMeter);
  const procs = started.running();
  const close = async () => {
    await closeMeter();
    await started.close();
  };
  const balancer = started.balancerOutput;
  return { client: started.project, other: null, meter, profiled: procs, procs, close, balancer };
}

/** Fails unless preflight says the project's route can launch. */
async function checkPreflight({ invocations, headers }) {
  const preflight = await call('preflight', 'POST', invocations.replace(/\/invocations$/, '/preflight'), {
    headers,
    body: { intent: INTENT },
  });
  if (preflight.can_launch !== true) {
    throw new Error(
      `preflight says the route cannot launch: ${JSON.stringify(preflight.blockers?.map((b) => b.code) ?? preflight)}`,
    );
  }
}

/** A project with its key, its agents (registered, started) and the one-stage route; answers its client. */
async function setUpProject({
  owner,
  host,
  wf,
  nodeArgs,
  production,
  agents,
  code,
  agentCount: count = agentCount,
}) {
  const project = await owner.createProject(code, `Bench ${code}`);
  const benchKey = await owner.createApiKey(
    [
      'workflows:run',
      'workflows:read',
      'workflow-contracts:read',
      'workflow-contracts:write',
      'artifact-schemas:write',
    ],
    `bench-${code.toLowerCase()}`,
  );
  // The agents: registered and started at the hub, each worked by a reference agent process.
  for (let i = 1; i <= count; i += 1) {
    const agent = await harness.registerStartedAgent(owner, {
      name: `bench-agent-${code.toLowerCase()}-${i}`,
      hostId: host.id,
      projectCode: project.code,
      capabilities: [REPORT_CAPABILITY],
    });
    const agentOptions = teardown.logged(`reference agent ${code} ${i}`, { nodeArgs });
    const proc = await harness.startReferenceAgent(owner, agent, {
      workflowUrl: wf.url,
      env: { LOG_LEVEL: 'warn', ...production },
      process: agentOptions,
    });
    teardown.track(proc, agentOptions);
    agents.push(proc);
  }
  // One route: an artifact schema and a contract whose template has one stage.
  const wfKey = { 'x-api-key': benchKey };
  await createReportRoute((step, url, body) => call(step, 'POST', url, { headers: wfKey, body, ok: [201] }), {
    wfUrl: wf.url,
    workspaceId: owner.workspace.id,
    projectId: project.id,
    name: `bench-report-${code.toLowerCase()}`,
  });
  const client = {
    invocations: `${wf.url}/api/v1/projects/${project.id}/workflow/invocations`,
    headers: wfKey,
  };
  await checkPreflight(client);
  return client;
}

/**
 * `count` sequential runs, each preceded by one no-op round trip of the floor queue, so that the floor is
 * measured under the same conditions as the runs; failures are counted, never thrown.
 */
async function sequentialRuns(client, floor, count) {
  const failures = failureLog({ examples: 5 });
  const runs = [];
  const floorMs = [];
  let busyMs = 0;
  for (let i = 0; i < count && !interrupted.aborted; i += 1) {
    const roundTrip = floor ? await floor.roundTrip() : undefined;
    if (roundTrip !== undefined) floorMs.push(roundTrip);
    const started = performance.now();
    if (interrupted.aborted) break;
    try {
      runs.push(await client.oneRun());
    } catch (error) {
      failures.add(error.label ?? String(error?.message ?? error), error.detail);
    }
    busyMs += performance.now() - started;
  }
  return { runs, failures, floorMs, wallMs: busyMs };
}

/** The burst's settings for `runBurst`. */
const burstSettings = () => ({
  count: burstCount,
  pollers: burstPollers,
  pollMs,
  waitS: options.wait,
  timeoutMs: burstTimeoutMs,
  signal: interrupted,
});

async function main() {
  let reported = false;
  try {
    if (compare) {
      reported = await compareReplicas();
      return;
    }
    const stack = replicated(scaled) ? await startReplicated(scaled) : await startStack();
    const { procs } = stack;
    if (options.fairness) {
      // Project B's client runs in a thread of its own, as another partner's would on its own machine.
      const b = await startProjectThread(stack.other, runSettings);
      teardown.push(() => b.close());
      await fairness({
        a: runClient(stack.client, runSettings),
        b,
        burst: (client) => runBurst(client, burstSettings()),
        runCount,
        warmupCount,
        burstCount,
        json: options.json,
        interrupted,
      });
      return;
    }
    const client = runClient(stack.client, runSettings);
    const { meter } = stack;
    const loadBefore = os.loadavg()[0];
    // Phase 1 (after its warm-up) with the floor's round trips between its runs, then the burst.
    const floor = await openFloor();
    teardown.push(() => floor.close());
    const warmup = await sequentialRuns(client, floor, warmupCount);
    const before1 = await meter.snapshot();
    const sequential = await sequentialRuns(client, floor, runCount);
    const after1 = await meter.snapshot();
    if (interrupted.aborted) return;
    await sleep(500);
    const loadBurst = os.loadavg()[0];
    const before2 = await meter.snapshot();
    const burst = await runBurst(client, burstSettings());
    const after2 = await meter.snapshot();
    const loadAfter = os.loadavg()[0];
    if (interrupted.aborted) return;
    const cost = {
      sequential: sequential.runs.length > 0 ? meter.per(before1, after1, sequential.runs.length) : null,
      burst: burst.completed > 0 ? meter.per(before2, after2, burst.completed) : null,
    };

    const crashed = procs.filter((p) => !p.running());
    const logs = [floor.failures, warmup.failures, sequential.failures, burst.failures];
    const errorCount = logs.reduce((sum, log) => sum + log.total, 0);
    const measured = { loadBefore, loadAfter, warmup, floor, sequential, burst, crashed, errorCount };
    const result = buildResult(settings, measured);
    result.cost_per_run = cost;
    result.scaleout = [scaleoutEntry(scaled, burst, cost.burst, { before: loadBurst, after: loadAfter })];
    result.process_logs = Object.fromEntries(
      procs.map((proc) => [proc.name, teardown.written(proc)]).filter(([, logs]) => logs.lines.length > 0),
    );
    printResult(result, options.json, (r) => {
      printReport(r);
      printCost({ 'phase 1 (one at a time)': cost.sequential, 'phase 2 (burst)': cost.burst }, 'run');
      printScaleout(r.scaleout, null);
    });
    if (profileDir)
      for (const proc of stack.profiled)
        await reportCpuProfiles('workflow-run', proc, profileDir, `${proc.name} CPU profile(s)`);
    if (errorCount > 0 || crashed.length > 0) {
      reported = true;
      console.error(
        `workflow-run: ${errorCount} request(s) or run(s) failed` +
          `${crashed.length ? `; exited early: ${crashed.map((p) => p.name).join(', ')}` : ''}`,
      );
      for (const log of logs) for (const example of log.examples) console.error(`  ${example}`);
      teardown.printOutputs();
      process.exitCode = 1;
    }
  } catch (error) {
    if (interrupted.aborted) return;
    if (!reported) teardown.printOutputs();
    throw error;
  } finally {
    await teardown.tearDown();
  }
}

/**
 * --compare-replicas: for each configuration of `settings.replicas` in turn, a stack of its own, the warm-up
 * runs and the burst; then the configurations side by side (runs/s, machine idle, CPU per run) and the
 * scale-out targets. Resolves to whether failures were reported.
 */
async function compareReplicas() {
  const entries = [];
  const costs = {};
  const failed = [];
  const loadBefore = os.loadavg()[0];
  for (const config of settings.replicas) {
    const stack = await startReplicated(config);
    const client = runClient(stack.client, runSettings);
    const warmup = await sequentialRuns(client, null, warmupCount);
    if (interrupted.aborted) return false;
    await sleep(500);
    const load = os.loadavg()[0];
    const before = await stack.meter.snapshot();
    // What HAProxy logs from here on is the burst's (its servers came up before the warm-up).
    const balancerLogAt = stack.balancer().length;
    const burst = await runBurst(client, burstSettings());
    const after = await stack.meter.snapshot();
    if (interrupted.aborted) return false;
    const cost = burst.completed > 0 ? stack.meter.per(before, after, burst.completed) : null;
    entries.push(
      scaleoutEntry(
        config,
        burst,
        cost,
        { before: load, after: os.loadavg()[0] },
        stack.balancer().slice(balancerLogAt),
      ),
    );
    costs[`${configLabel(config)} (burst)`] = cost;
    const crashed = stack.procs.filter((p) => !p.running()).map((p) => p.name);
    if (warmup.failures.total + burst.failures.total > 0 || crashed.length > 0)
      failed.push({
        config,
        crashed,
        examples: [...warmup.failures.examples, ...burst.failures.examples],
        balancer: stack.balancer(),
      });
    if (profileDir)
      for (const proc of stack.profiled)
        await reportCpuProfiles('workflow-run', proc, profileDir, `${proc.name} CPU profile(s)`);
    await stack.close();
  }
  const targets = scaleoutTargets(entries);
  const result = {
    date: new Date().toISOString(),
    machine: machine(loadBefore),
    settings,
    scaleout: entries,
    scaleout_targets: targets,
    cost_per_run: costs,
    errors: entries.reduce((sum, e) => sum + e.failures, 0),
  };
  printResult(result, options.json, (r) => {
    printScaleout(r.scaleout, r.scaleout_targets);
    printCost(costs, 'run');
  });
  for (const { config, crashed, examples, balancer } of failed) {
    console.error(
      `workflow-run: ${configLabel(config)}: runs failed${crashed.length ? `; exited early: ${crashed.join(', ')}` : ''}`,
    );
    for (const example of examples) console.error(`  ${example}`);
    if (balancer) console.error(`  HAProxy:\n${balancer.trimEnd().replace(/^/gm, '    ')}`);
    process.exitCode = 1;
  }
  return failed.length > 0;
}

/**
 * The floor: a BullMQ Queue, QueueEvents and a Worker with a no-op processor on the same Redis under a prefix
 * of their own. `roundTrip()` adds one job and resolves to the milliseconds until its completion is seen
 * through QueueEvents (undefined when it failed; failures are counted).
 */
async function openFloor() {
  const { queue, events, close } = await noopQueue('bench-floor', {
    prefix: uniqueQueuePrefix('benchfloor'),
    concurrency: 1,
    events: true,
  });
  const failures = failureLog({ examples: 5 });
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

run(main);
