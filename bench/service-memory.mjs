#!/usr/bin/env node
// Memory of every long-running process of the product: fresh, under mixed load and idle after it, over rounds.
// One file because its stack and its readings are one sequence over the same processes (start, read, load,
// settle, read again); the load mix, the request tally and the report are modules in service-memory/.
//
//   pnpm run build && node bench/service-memory.mjs [--load 60] [--settle 300] [--rounds 3] [--fresh-wait 10]
//                                                  [--concurrency 4] [--growth-mb 10] [--target-mb 120]
//                                                  [--node-options '--flag …'] [--node-defaults]
//                                                  [--heap-snapshots DIR] [--json]
//
// Starts, from their builds and over fresh migrated databases and the machine's Redis (under a prefix of its
// own), every process a deployment runs: the hub (`apps/hub-api/dist/main.js`, with HUB_REDIS_URL), the Workflow
// API (`dist/main.js`) and its worker (`dist/worker-main.js`), the relay and the console router of a runtime host
// (both pointed at the real hub), and one reference agent (runs stages and serves its console on a registered
// port). Each runs at its production defaults (NODE_ENV=production, LOG_LEVEL=warn) with the node options its
// deployment starts it with (DEPLOYED_NODE_OPTIONS and DEPLOYED_ENV of harness/stack.mjs; `--node-defaults` drops both,
// `--node-options '…'` replaces the node options for every process), plus `--require bench/memory-probe.cjs`, which answers SIGUSR2 with
// the process's own heap figures. Set-up goes through the public APIs: a workspace, a project, keys, a live
// runtime host, the agent, an artifact schema, a one-stage contract and a delivery subscription to a receiver in
// this process.
//
// Readings, per process: RSS (and its anonymous and file-backed parts) from /proc, V8 heap used and total,
// external and array buffers from the probe. Taken `--fresh-wait` s after everything is ready (fresh); then, for
// each of `--rounds` rounds: `--load` s of mixed load on every process at once (read at its end: under load;
// RSS also sampled every second: peak), then `--settle` s without load (read at its end: idle).
//
// Mixed load (`--concurrency` loops per process, each picking the next request in turn):
//   hub            API-key and session reads (workspaces, me, projects, members, agent, contract, JWKS,
//                  /openapi.json), an API key created and revoked (audit, Redis notice), a sign-in every 5 s;
//   Workflow API   invoke → launch → poll until completed (drives the worker, the hub handoffs and the agent),
//                  resolve, preflight, contract and invocation reads, deliveries, /openapi.json;
//   worker         the runs' reconcile jobs and each completion's signed delivery to the receiver;
//   agent          the runs' stages, and console requests (health, chat) through the router;
//   router         those console requests with the owner's participant token, refusals (no credential,
//                  unknown agent), /status;
//   relay          /status and /readyz (which calls the hub), spawns refused at its token guard (401, 403), by
//                  its allow-list (422) and by its body check (400), and one real spawn every 5 s: the built svc
//                  CLI run by the relay, which refuses it (no profile on this host) and the relay reports that.
//
// Verdict per process: idle RSS (the worst of the fresh and every post-round idle reading) < `--target-mb`; and
// no growth: the idle RSS after the last round is not more than `--growth-mb` above the idle RSS after the first
// (the first round fills caches, compiled query plans and JIT code; what rises after it is growth). The same
// difference of V8 heap used is printed beside it.
// With `--heap-snapshots DIR`, after the last reading every process above the target writes a heap snapshot
// (v8.writeHeapSnapshot) into DIR. A missed target is reported, not failed: the exit code is 1 only when a
// request fails, a process exits or set-up fails. Processes, databases, queue keys and temp files are removed at
// the end, also on failure or Ctrl-C. Only 127.0.0.1 is contacted.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { assertBuilt, benchCli, fail, load, root, run, testing } from './harness/cli.mjs';
import { memoryStatus } from './harness/proc.mjs';
import { machine, printResult } from './harness/report.mjs';
import {
  DEPLOYED_ENV,
  DEPLOYED_NODE_OPTIONS,
  cleanupStack,
  redisUrl,
  sleep,
  tempDir,
  waitForAnswer,
} from './harness/stack.mjs';
import {
  REPORT_CAPABILITY,
  createBenchDatabases,
  createReportRoute,
  startWorkflowStack,
} from './harness/workflow-stack.mjs';
import { runLoad } from './service-memory/load.mjs';
import { printReport, verdicts } from './service-memory/report.mjs';
import { requestTally, setup } from './service-memory/requests.mjs';

const NAME = 'service-memory';
const ENGINE_QUEUES = ['workflow-reconcile', 'workflow-delivery'];

const options = benchCli(NAME, ({ flag, int, seconds, text }) => ({
  load: seconds('60'),
  settle: seconds('300'),
  rounds: int('3', 1, 20),
  'fresh-wait': seconds('10'),
  concurrency: int('4', 1, 64),
  'growth-mb': int('10', 0, 10_000),
  'target-mb': int('120', 1, 100_000),
  'node-options': text(),
  'node-defaults': flag(),
  'heap-snapshots': text(),
  json: flag(),
}));
const { load: loadMs, settle: settleMs, rounds, concurrency } = options;
const freshWaitMs = options['fresh-wait'];
const growthMb = options['growth-mb'];
const targetMb = options['target-mb'];
const nodeDefaults = options['node-defaults'];
const nodeOptions = (options['node-options'] ?? (nodeDefaults ? '' : DEPLOYED_NODE_OPTIONS))
  .split(/\s+/)
  .filter(Boolean);
const launchEnv = nodeDefaults ? {} : DEPLOYED_ENV;
const snapshotDir = options['heap-snapshots'] ? path.resolve(options['heap-snapshots']) : undefined;
if (process.platform !== 'linux') fail('reads /proc/<pid>/status: runs on Linux only');

const SVC_ENTRY = 'apps/svc-cli/bin/run.js';
assertBuilt([
  'apps/hub-api/dist/main.js',
  'apps/workflow-api/dist/main.js',
  'apps/workflow-api/dist/worker-main.js',
  'apps/relay/dist/main.js',
  'apps/console-router/dist/main.js',
  'apps/reference-agent/dist/main.js',
  'apps/svc-cli/dist/main.js',
]);
const harness = testing();
const { deriveConsoleProxyKey } = load('packages/auth/dist/index.js');
const { freePort, startBuiltEntryPoint, waitUntilReady } = harness;

const teardown = cleanupStack(
  NAME,
  'stopping the processes and removing the databases, queue keys and files',
);
const interrupted = teardown.interrupted;
const tmp = tempDir(teardown, 'svc-memory-');
const probeDir = path.join(tmp, 'probe');
mkdirSync(probeDir);
const probeArgs = ['--require', path.join(root, 'bench', 'memory-probe.cjs'), ...nodeOptions];
const production = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  SVC_MEMORY_PROBE_DIR: probeDir,
  ...launchEnv,
};

/** The processes measured, by service name. */
const services = new Map();
/** Starts the process of service `name` with `start(options)` and registers it; resolves to it. */
async function startService(name, start) {
  const startOptions = teardown.logged(name, { nodeArgs: probeArgs });
  const proc = teardown.track(await start(startOptions), startOptions);
  services.set(name, proc);
  return proc;
}

/**
 * The built `apps/<app>` (the service of that name) on a free port, as deployed but for `env(port)`;
 * registered, and resolved once ready with its URL.
 */
async function startApp(app, env) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = await startService(app, (opts) =>
    startBuiltEntryPoint(path.join(root, 'apps', app), 'dist/main.js', { ...production, ...env(port) }, opts),
  );
  await waitUntilReady(proc, url);
  return { proc, url };
}

// ---------------------------------------------------------------------------------------------------------------
// Readings.

const MB = 1024 * 1024;

/** Asks the process (SIGUSR2) for its heap figures; `snapshot` also writes a heap snapshot. */
async function probe(pid, what = 'memory') {
  const file = path.join(probeDir, `memory-${pid}.json`);
  rmSync(file, { force: true });
  if (what !== 'memory') writeFileSync(path.join(probeDir, `request-${pid}`), what);
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + (what === 'snapshot' ? 120_000 : 5_000);
  while (Date.now() < deadline) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
    await sleep(50);
  }
  return undefined;
}

async function readAll() {
  const out = {};
  for (const [name, proc] of services) {
    if (!proc.running()) continue;
    const pid = proc.child.pid;
    const heap = await probe(pid);
    const status = memoryStatus(pid);
    const m = heap?.memory;
    out[name] = {
      ...status,
      heap_used_mb: m ? m.heapUsed / MB : NaN,
      heap_total_mb: m ? m.heapTotal / MB : NaN,
      external_mb: m ? m.external / MB : NaN,
      array_buffers_mb: m ? m.arrayBuffers / MB : NaN,
    };
  }
  return out;
}

/** RSS of every process once a second until stopped; resolves to the peak per process. */
function samplePeaks() {
  const peaks = {};
  const timer = setInterval(() => {
    for (const [name, proc] of services) {
      if (!proc.running()) continue;
      try {
        peaks[name] = Math.max(peaks[name] ?? 0, memoryStatus(proc.child.pid).rss_mb);
      } catch {
        // The process ended between the check and the read; its exit is reported.
      }
    }
  }, 1000);
  return () => {
    clearInterval(timer);
    return peaks;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The stack.

/** The delivery receiver: answers 204 to every POST and counts them. */
async function startReceiver() {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') received += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks/svc`,
    received: () => received,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function startStack() {
  const databases = await createBenchDatabases(teardown);
  const { hubDb } = databases;
  const receiver = await startReceiver();
  teardown.push(() => receiver.close());

  const prefix = harness.uniqueQueuePrefix('benchmem');
  const { hub, wf, ...stackProcs } = await startWorkflowStack(teardown, {
    databases,
    queuePrefix: prefix,
    queues: ENGINE_QUEUES,
    names: { hub: 'hub', api: 'workflow-api', worker: 'workflow-worker' },
    hubEnv: {
      ...production,
      HUB_MANAGED_PROVIDERS: 'local',
      HUB_REDIS_URL: redisUrl,
      HUB_REDIS_PREFIX: prefix,
    },
    workflowEnv: {
      ...production,
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
    },
    process: { nodeArgs: probeArgs },
  });
  for (const [name, proc] of [
    ['hub', hub.process],
    ['workflow-api', stackProcs.api],
    ['workflow-worker', stackProcs.worker],
  ])
    services.set(name, proc);

  // The workspace and its owner, with a password this bench knows (it signs in during the load).
  const email = `memory-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const workspace = await harness.bootstrapHubWorkspace({
    databaseUrl: hubDb.url,
    slug: 'bench',
    name: 'Memory bench',
    email,
    password,
  });
  const owner = await harness.signInHubOwner(hub.url, workspace, email, password);
  const project = await owner.createProject('MEM', 'Memory');
  const keys = {
    hub: await owner.createApiKey(['workspaces:read', 'contract:read'], 'memory bench hub'),
    workflow: await owner.createApiKey(
      [
        'workflows:run',
        'workflows:read',
        'workflow-contracts:read',
        'workflow-contracts:write',
        'artifact-schemas:write',
        'workflow-delivery:manage',
      ],
      'memory bench workflow',
    ),
    runtime: await owner.createApiKey(['runtime-config:read', 'contract:read'], 'memory bench runtime host'),
  };
  const host = await harness.registerLiveRuntimeHost(owner, 'memory-host');
  teardown.push(() => host.stop());

  // The agent: runs the contract's stage and serves its console on a registered port.
  const bearer = { authorization: `Bearer ${owner.token}` };
  const servePort = await freePort();
  const agent = await setup('register agent', `${hub.url}/api/v1/workspaces/${workspace.slug}/agents`, {
    method: 'POST',
    headers: bearer,
    body: {
      name: 'memory-agent',
      runtime_instance_id: host.id,
      capabilities: [REPORT_CAPABILITY],
      project_code: project.code,
      model: 'local/echo',
      serve_port: servePort,
    },
    ok: [201],
  });
  const agentId = agent.id ?? agent.agent?.id;
  const started = await setup('start agent', `${hub.url}/api/v1/agents/${agentId}/start`, {
    method: 'POST',
    headers: bearer,
    body: { launch_path: 'direct' },
  });
  const consoleSecret = randomBytes(32).toString('base64url');
  await startService('reference-agent', (opts) =>
    harness.startReferenceAgent(
      owner,
      { id: agentId, token: started.agent_token },
      {
        workflowUrl: wf.url,
        env: {
          ...production,
          AGENT_SERVE_PORT: String(servePort),
          AGENT_WORKDIR: mkdtempSync(path.join(tmp, 'agent-')),
          AGENT_CONSOLE_PROXY_KEY: deriveConsoleProxyKey(consoleSecret, agentId),
          SHELL: '/bin/sh',
          HOME: tmp,
        },
        process: opts,
      },
    ),
  );

  // The relay and the console router of the host, both on the real hub.
  const relayToken = randomBytes(32).toString('hex');
  const relay = await startApp('relay', (port) => ({
    RELAY_HOST: '127.0.0.1',
    RELAY_PORT: String(port),
    SVC_HUB_URL: hub.url,
    SVC_WORKSPACE: workspace.slug,
    SVC_WORKSPACE_API_KEY: keys.runtime,
    SVC_RELAY_TOKEN: relayToken,
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_RELAY_SVC_ENTRY: path.join(root, SVC_ENTRY),
    SVC_RELAY_SPAWN_LOG: path.join(tmp, 'spawns.jsonl'),
    SVC_CONFIG_DIR: mkdtempSync(path.join(tmp, 'svc-config-')),
    HOME: tmp,
  }));
  const router = await startApp('console-router', (port) => ({
    CONSOLE_ROUTER_HOST: '127.0.0.1',
    CONSOLE_ROUTER_PORT: String(port),
    HUB_URL: hub.url,
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_WORKSPACE_API_KEY: keys.runtime,
    CONSOLE_ROUTER_UPSTREAM_SECRET: consoleSecret,
    CONSOLE_ROUTER_PUBLIC_BASE_URL: 'https://console.example.test',
  }));

  // The route: an artifact schema, a one-stage contract and a subscription to the receiver.
  const wfKey = { 'x-api-key': keys.workflow };
  const contract = await createReportRoute(
    (step, url, body) => setup(step, url, { method: 'POST', headers: wfKey, body, ok: [201] }),
    { wfUrl: wf.url, workspaceId: workspace.id, projectId: project.id, name: 'memory-report' },
  );
  const projectBase = `${wf.url}/api/v1/projects/${project.id}/workflow`;
  await setup('subscription', `${projectBase}/delivery-subscriptions`, {
    method: 'POST',
    headers: wfKey,
    body: { url: receiver.url, events: ['invocation.completed'], description: 'memory bench receiver' },
    ok: [201],
  });

  // The router must reach the agent before anything is measured (its table polls the hub every 5 s).
  const agentRoute = `${router.url}/${workspace.slug}/agents/${agentId}`;
  await waitForAnswer(router.proc, `${agentRoute}/global/health`, { headers: bearer, timeoutMs: 30_000 });

  return {
    hub: { url: hub.url, slug: workspace.slug, projectId: project.id, agentId, email, password, keys },
    session: { token: owner.token },
    wf: { base: projectBase, url: wf.url, headers: wfKey, contractId: contract.contract_id },
    relay: { url: relay.url, token: relayToken },
    router: { url: router.url, agentRoute },
    receiver,
  };
}

async function main() {
  let failed = false;
  try {
    const stack = await startStack();
    const loadBefore = os.loadavg()[0];
    await sleep(freshWaitMs);
    const result = {
      date: new Date().toISOString(),
      settings: {
        rounds,
        load_s: loadMs / 1000,
        settle_s: settleMs / 1000,
        fresh_wait_s: freshWaitMs / 1000,
        concurrency,
        node_options: nodeOptions.join(' '),
        launch_env: launchEnv,
        target_idle_mb: targetMb,
        growth_mb: growthMb,
      },
      fresh: await readAll(),
      rounds: [],
      snapshots: [],
    };
    for (let round = 1; round <= rounds && !interrupted.aborted; round += 1) {
      const peaks = samplePeaks();
      const { deliveries } = await runLoad(stack, { loadMs, concurrency, interrupted });
      const load = await readAll();
      const peak = peaks();
      if (interrupted.aborted) return;
      if (!options.json) console.error(`${NAME}: round ${round} loaded; idle for ${settleMs / 1000} s`);
      await sleep(settleMs);
      result.rounds.push({ load, peak, idle: await readAll(), deliveries, load_average_1m: os.loadavg()[0] });
    }
    if (interrupted.aborted) return;
    result.machine = machine(loadBefore);
    result.verdicts = verdicts(result);
    if (snapshotDir) {
      mkdirSync(snapshotDir, { recursive: true });
      for (const [name, v] of Object.entries(result.verdicts)) {
        if (v.idle_ok) continue;
        const answer = await probe(services.get(name).child.pid, 'snapshot');
        if (!answer?.snapshot) continue;
        const file = path.join(snapshotDir, `${name}-${Date.now()}.heapsnapshot`);
        renameSync(answer.snapshot, file);
        result.snapshots.push({ service: name, file });
      }
    }
    const { requests, failures } = requestTally();
    result.requests = requests;
    result.exited = [...services].filter(([, proc]) => !proc.running()).map(([name]) => name);
    printResult(result, options.json, printReport);
    if (failures > 0 || result.exited.length > 0) {
      failed = true;
      console.error(
        `${NAME}: ${failures} request(s) failed${result.exited.length ? `; exited: ${result.exited.join(', ')}` : ''}`,
      );
      for (const t of Object.values(requests)) for (const e of t.examples) console.error(`  ${e}`);
      process.exitCode = 1;
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    if (failed && !interrupted.aborted) teardown.printOutputs();
    await teardown.tearDown();
  }
}

run(main);
