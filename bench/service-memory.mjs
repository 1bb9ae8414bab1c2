#!/usr/bin/env node
// Memory of every long-running process of the product: fresh, under mixed load and idle after it, over rounds.
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
// deployment starts it with (DEPLOYED_NODE_OPTIONS and DEPLOYED_ENV of support.mjs; `--node-defaults` drops both,
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
import {
  DEPLOYED_ENV,
  DEPLOYED_NODE_OPTIONS,
  benchArgs,
  benchCli,
  cleanupStack,
  f,
  lineCounter,
  machine,
  printLines,
  root,
} from './support.mjs';

const NAME = 'service-memory';
const cli = benchCli(NAME);
const ENGINE_QUEUES = ['workflow-reconcile', 'workflow-delivery'];
const INTENT = 'Please write the weekly report for the memory bench';
const CAPABILITY = 'report';
const SERVICES = ['hub', 'workflow-api', 'workflow-worker', 'relay', 'console-router', 'reference-agent'];

const { values: args } = benchArgs('service-memory', {
  options: {
    load: { type: 'string', default: '60' },
    settle: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
    'fresh-wait': { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '4' },
    'growth-mb': { type: 'string', default: '10' },
    'target-mb': { type: 'string', default: '120' },
    'node-options': { type: 'string' },
    'node-defaults': { type: 'boolean', default: false },
    'heap-snapshots': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const loadMs = cli.seconds(args.load, 'load');
const settleMs = cli.seconds(args.settle, 'settle');
const rounds = cli.intBetween(args.rounds, 'rounds', 1, 20);
const freshWaitMs = cli.seconds(args['fresh-wait'], 'fresh-wait');
const concurrency = cli.intBetween(args.concurrency, 'concurrency', 1, 64);
const growthMb = cli.intBetween(args['growth-mb'], 'growth-mb', 0, 10_000);
const targetMb = cli.intBetween(args['target-mb'], 'target-mb', 1, 100_000);
const nodeDefaults = args['node-defaults'];
const nodeOptions = (args['node-options'] ?? (nodeDefaults ? '' : DEPLOYED_NODE_OPTIONS))
  .split(/\s+/)
  .filter(Boolean);
const launchEnv = nodeDefaults ? {} : DEPLOYED_ENV;
const snapshotDir = args['heap-snapshots'] ? path.resolve(args['heap-snapshots']) : undefined;
if (process.platform !== 'linux') cli.fail('reads /proc/<pid>/status: runs on Linux only');

const SVC_ENTRY = 'apps/svc-cli/bin/run.js';
cli.assertBuilt([
  'apps/hub-api/dist/main.js',
  'apps/workflow-api/dist/main.js',
  'apps/workflow-api/dist/worker-main.js',
  'apps/relay/dist/main.js',
  'apps/console-router/dist/main.js',
  'apps/reference-agent/dist/main.js',
  'apps/svc-cli/dist/main.js',
]);
const harness = cli.load('packages/testing/dist/index.js');
const { deriveConsoleProxyKey } = cli.load('packages/auth/dist/index.js');
const { freePort, sleep, startBuiltEntryPoint, waitUntilReady } = harness;

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const teardown = cleanupStack(
  NAME,
  'stopping the processes and removing the databases, queue keys and files',
);
const interrupted = teardown.interrupted;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-memory-'));
teardown.push(() => rmSync(tmp, { recursive: true, force: true }));
const probeDir = path.join(tmp, 'probe');
mkdirSync(probeDir);
const probeArgs = ['--require', path.join(root, 'bench', 'memory-probe.cjs'), ...nodeOptions];
const production = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  SVC_MEMORY_PROBE_DIR: probeDir,
  ...launchEnv,
};

/** The processes measured, by service name: { proc, lines }. */
const services = new Map();
function startOptions(name) {
  const lines = lineCounter();
  return { lines, options: { name, nodeArgs: probeArgs, outputLimit: 16_000, onLine: (l) => lines.add(l) } };
}
function track(name, proc, lines) {
  teardown.procs.push(proc);
  services.set(name, { proc, lines });
  return proc;
}

// ---------------------------------------------------------------------------------------------------------------
// Readings.

const MB = 1024 * 1024;
function procStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  return { rss_mb: kb('VmRSS'), anon_mb: kb('RssAnon'), file_mb: kb('RssFile'), hwm_mb: kb('VmHWM') };
}

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
  for (const [name, { proc }] of services) {
    if (!proc.running()) continue;
    const pid = proc.child.pid;
    const heap = await probe(pid);
    const status = procStatus(pid);
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
    for (const [name, { proc }] of services) {
      if (!proc.running()) continue;
      try {
        peaks[name] = Math.max(peaks[name] ?? 0, procStatus(proc.child.pid).rss_mb);
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
// Requests.

/** Expected answers and failures, per service and label. */
const tally = new Map();
function count(service, label, ok, detail) {
  const t = tally.get(service) ?? { requests: 0, failures: new Map(), examples: [] };
  tally.set(service, t);
  t.requests += 1;
  if (!ok) {
    t.failures.set(label, (t.failures.get(label) ?? 0) + 1);
    if (t.examples.length < 5) t.examples.push(`${label}${detail ? `: ${detail}` : ''}`);
  }
}

/** One request; counts it under `service`; resolves to the parsed body (or undefined) when its status is in `ok`. */
async function call(service, label, url, { method = 'GET', headers = {}, body, ok = [200] } = {}) {
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    count(service, `${label}: ${error?.cause?.code ?? error?.name ?? 'error'}`, false);
    return undefined;
  }
  const text = await res.text().catch(() => '');
  const good = ok.includes(res.status);
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  count(service, `${label}: HTTP ${res.status}${json?.code ? ` ${json.code}` : ''}`, good, json?.detail);
  return good ? (json ?? {}) : undefined;
}

/** A set-up request: throws unless the status is in `ok`. */
async function setup(step, url, options = {}) {
  const data = await call('set-up', step, url, options);
  if (data === undefined) {
    const t = tally.get('set-up');
    throw new Error(`set-up failed at ${step}: ${t.examples.at(-1) ?? 'no answer'}`);
  }
  return data.data ?? data;
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
  const [hubDb, wfDb] = await Promise.all([
    harness.createHubDatabase('svc_hub_bench'),
    harness.createWorkflowDatabase('svc_workflow_bench'),
  ]);
  teardown.push(() => Promise.all([hubDb.drop(), wfDb.drop()]));
  const receiver = await startReceiver();
  teardown.push(() => receiver.close());

  const prefix = harness.uniqueQueuePrefix('benchmem');
  teardown.push(() => harness.obliterateQueues(redisUrl, prefix, ENGINE_QUEUES));
  const serviceToken = harness.newServiceToken();
  const hubStart = startOptions('hub');
  const hub = await harness.startHub({
    databaseUrl: hubDb.url,
    serviceToken,
    env: {
      ...production,
      HUB_MANAGED_PROVIDERS: 'local',
      HUB_REDIS_URL: redisUrl,
      HUB_REDIS_PREFIX: prefix,
    },
    process: hubStart.options,
  });
  track('hub', hub.process, hubStart.lines);

  const wf = await harness.workflowEnv({
    databaseUrl: wfDb.url,
    redisUrl,
    queuePrefix: prefix,
    hubUrl: hub.url,
    serviceToken,
    env: {
      ...production,
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
    },
  });
  const [apiStart, workerStart] = [startOptions('workflow-api'), startOptions('workflow-worker')];
  await Promise.all([
    harness.startWorkflowApi(wf, apiStart.options).then((p) => track('workflow-api', p, apiStart.lines)),
    harness
      .startWorkflowWorker(wf, workerStart.options)
      .then((p) => track('workflow-worker', p, workerStart.lines)),
  ]);

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
      capabilities: [CAPABILITY],
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
  const agentStart = startOptions('reference-agent');
  const agentProc = await harness.startReferenceAgent(
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
      process: agentStart.options,
    },
  );
  track('reference-agent', agentProc, agentStart.lines);

  // The relay and the console router of the host, both on the real hub.
  const relayPort = await freePort();
  const relayToken = randomBytes(32).toString('hex');
  const relayStart = startOptions('relay');
  const relayUrl = `http://127.0.0.1:${relayPort}`;
  const relay = track(
    'relay',
    startBuiltEntryPoint(
      path.join(root, 'apps/relay'),
      'dist/main.js',
      {
        ...production,
        RELAY_HOST: '127.0.0.1',
        RELAY_PORT: String(relayPort),
        SVC_HUB_URL: hub.url,
        SVC_WORKSPACE: workspace.slug,
        SVC_WORKSPACE_API_KEY: keys.runtime,
        SVC_RELAY_TOKEN: relayToken,
        SVC_RUNTIME_INSTANCE_ID: host.id,
        SVC_RELAY_SVC_ENTRY: path.join(root, SVC_ENTRY),
        SVC_RELAY_SPAWN_LOG: path.join(tmp, 'spawns.jsonl'),
        SVC_CONFIG_DIR: mkdtempSync(path.join(tmp, 'svc-config-')),
        HOME: tmp,
      },
      relayStart.options,
    ),
    relayStart.lines,
  );
  await waitUntilReady(relay, relayUrl);

  const routerPort = await freePort();
  const routerStart = startOptions('console-router');
  const routerUrl = `http://127.0.0.1:${routerPort}`;
  const router = track(
    'console-router',
    startBuiltEntryPoint(
      path.join(root, 'apps/console-router'),
      'dist/main.js',
      {
        ...production,
        CONSOLE_ROUTER_HOST: '127.0.0.1',
        CONSOLE_ROUTER_PORT: String(routerPort),
        HUB_URL: hub.url,
        SVC_RUNTIME_INSTANCE_ID: host.id,
        SVC_WORKSPACE_API_KEY: keys.runtime,
        CONSOLE_ROUTER_UPSTREAM_SECRET: consoleSecret,
        CONSOLE_ROUTER_PUBLIC_BASE_URL: 'https://console.example.test',
      },
      routerStart.options,
    ),
    routerStart.lines,
  );
  await waitUntilReady(router, routerUrl);

  // The route: an artifact schema, a one-stage contract and a subscription to the receiver.
  const wfKey = { 'x-api-key': keys.workflow };
  await setup('artifact schema', `${wf.url}/api/v1/workspaces/${workspace.id}/artifact-schemas`, {
    method: 'POST',
    headers: wfKey,
    body: {
      project_id: project.id,
      name: 'memory-report',
      version: '1.0.0',
      json_schema: harness.REPORT_SCHEMA,
    },
    ok: [201],
  });
  const projectBase = `${wf.url}/api/v1/projects/${project.id}/workflow`;
  const contract = await setup('contract', `${projectBase}/contracts`, {
    method: 'POST',
    headers: wfKey,
    body: {
      name: 'Weekly report',
      priority: 10,
      fallback: false,
      is_active: true,
      classifier: { intentContains: ['weekly report'] },
      template: {
        key: 'memory-report-flow',
        version: '1.0.0',
        required_capabilities: [],
        artifact_schema: { name: 'memory-report', version: '1.0.0' },
        guardrails: { human_approval_required: false },
        stages: [{ key: 'write', title: 'Write the report', required_capabilities: [CAPABILITY] }],
      },
    },
    ok: [201],
  });
  await setup('subscription', `${projectBase}/delivery-subscriptions`, {
    method: 'POST',
    headers: wfKey,
    body: { url: receiver.url, events: ['invocation.completed'], description: 'memory bench receiver' },
    ok: [201],
  });

  // The router must reach the agent before anything is measured (its table polls the hub every 5 s).
  const agentRoute = `${routerUrl}/${workspace.slug}/agents/${agentId}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${agentRoute}/global/health`, { headers: bearer }).catch(() => undefined);
    await res?.arrayBuffer();
    if (res?.status === 200) break;
    if (Date.now() > deadline)
      throw new Error(`the router did not reach the agent (last HTTP ${res?.status})`);
    await sleep(250);
  }

  return {
    hub: { url: hub.url, slug: workspace.slug, projectId: project.id, agentId, email, password, keys },
    session: { token: owner.token },
    wf: { base: projectBase, url: wf.url, headers: wfKey, contractId: contract.contract_id },
    relay: { url: relayUrl, token: relayToken },
    router: { url: routerUrl, agentRoute },
    receiver,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Load: for each process a few loops, each taking the next request of its list in turn, until the deadline.

function loops(stack) {
  const { hub, session, wf, relay, router } = stack;
  const auth = () => ({ authorization: `Bearer ${session.token}` });
  const hubKey = { 'x-api-key': hub.keys.hub };
  let sequence = 0;
  const next = () => `${process.pid}-${(sequence += 1)}-${randomBytes(3).toString('hex')}`;

  const hubRequests = [
    () => call('hub', 'GET workspaces (key)', `${hub.url}/api/v1/workspaces`, { headers: hubKey }),
    () => call('hub', 'GET me', `${hub.url}/api/v1/me`, { headers: auth() }),
    () =>
      call('hub', 'GET projects', `${hub.url}/api/v1/workspaces/${hub.slug}/projects`, { headers: auth() }),
    () => call('hub', 'GET members', `${hub.url}/api/v1/workspaces/${hub.slug}/members`, { headers: auth() }),
    () => call('hub', 'GET agent', `${hub.url}/api/v1/agents/${hub.agentId}`, { headers: auth() }),
    () => call('hub', 'GET contract', `${hub.url}/api/v1/contract`, { headers: hubKey }),
    () => call('hub', 'GET jwks', `${hub.url}/.well-known/jwks.json`),
    () => call('hub', 'GET openapi', `${hub.url}/openapi.json`),
    async () => {
      const created = await call('hub', 'POST api key', `${hub.url}/api/v1/workspaces/${hub.slug}/api-keys`, {
        method: 'POST',
        headers: auth(),
        body: { name: `memory ${next()}`, scopes: ['workspaces:read'] },
        ok: [201],
      });
      const id = created?.data?.id ?? created?.data?.api_key?.id;
      if (id) {
        await call('hub', 'DELETE api key', `${hub.url}/api/v1/workspaces/${hub.slug}/api-keys/${id}`, {
          method: 'DELETE',
          headers: auth(),
          ok: [200, 204],
        });
      }
    },
  ];

  const resolveBody = { intent: INTENT };
  const workflowRequests = [
    () =>
      call('workflow-api', 'POST resolve', `${wf.base}/resolve-intent`, {
        method: 'POST',
        headers: wf.headers,
        body: resolveBody,
      }),
    () =>
      call('workflow-api', 'POST preflight', `${wf.base}/preflight`, {
        method: 'POST',
        headers: wf.headers,
        body: resolveBody,
      }),
    () => call('workflow-api', 'GET contracts', `${wf.base}/contracts`, { headers: wf.headers }),
    () =>
      call('workflow-api', 'GET contract', `${wf.base}/contracts/${wf.contractId}`, { headers: wf.headers }),
    () => call('workflow-api', 'GET invocations', `${wf.base}/invocations`, { headers: wf.headers }),
    () => call('workflow-api', 'GET deliveries', `${wf.base}/deliveries`, { headers: wf.headers }),
    () => call('workflow-api', 'GET openapi', `${wf.url}/openapi.json`),
  ];

  /** One run: invoke → launch → poll until completed (the worker, the hub handoffs and the agent work it). */
  async function oneRun(deadline) {
    const invoked = await call('workflow-api', 'POST invoke', `${wf.base}/invocations`, {
      method: 'POST',
      headers: { ...wf.headers, 'idempotency-key': `memory-${next()}` },
      body: { intent: INTENT },
      ok: [201],
    });
    const id = invoked?.data?.invocation_id;
    if (!id) return;
    const launched = await call('workflow-api', 'POST launch', `${wf.base}/invocations/${id}/launch`, {
      method: 'POST',
      headers: wf.headers,
      ok: [200, 202],
    });
    if (!launched) return;
    const until = Math.max(deadline, Date.now()) + 30_000;
    for (;;) {
      const view = await call('workflow-api', 'GET invocation', `${wf.base}/invocations/${id}`, {
        headers: wf.headers,
      });
      const state = view?.data?.state;
      if (state === 'completed') return;
      if (state === 'failed' || state === 'cancelled' || view === undefined || Date.now() > until) {
        count('workflow-api', `run ended ${state ?? 'without an answer'}`, false, id);
        return;
      }
      await sleep(50);
    }
  }

  const routerRequests = [
    () =>
      call('console-router', 'GET agent health', `${router.agentRoute}/global/health`, { headers: auth() }),
    () =>
      call('console-router', 'POST chat message', `${router.agentRoute}/chat/messages`, {
        method: 'POST',
        headers: auth(),
        body: { text: `status ${next()}` },
        ok: [202],
      }),
    () =>
      call('console-router', 'GET chat messages', `${router.agentRoute}/chat/messages`, { headers: auth() }),
    () => call('console-router', 'no credential', `${router.agentRoute}/global/health`, { ok: [401] }),
    () =>
      call('console-router', 'unknown agent', `${router.url}/${hub.slug}/agents/agt_unknown/global/health`, {
        headers: auth(),
        ok: [404],
      }),
    () => call('console-router', 'GET status', `${router.url}/status`),
  ];

  const spawnBody = () => ({
    spawn_id: `spw_${randomBytes(8).toString('hex')}`,
    agent: { name: `mem-${next()}` },
  });
  const relayToken = { 'x-svc-relay-token': relay.token };
  const relayRequests = [
    () => call('relay', 'GET status', `${relay.url}/status`),
    // 503 is the readiness answer when the hub does not answer within the relay's 2 s (a loaded machine).
    () => call('relay', 'GET readyz', `${relay.url}/readyz`, { ok: [200, 503] }),
    () =>
      call('relay', 'spawn without token', `${relay.url}/spawn`, {
        method: 'POST',
        body: spawnBody(),
        ok: [401],
      }),
    () =>
      call('relay', 'spawn wrong token', `${relay.url}/spawn`, {
        method: 'POST',
        headers: { 'x-svc-relay-token': `${relay.token}0` },
        body: spawnBody(),
        ok: [403],
      }),
    () =>
      call('relay', 'spawn unknown command', `${relay.url}/spawn`, {
        method: 'POST',
        headers: relayToken,
        body: { ...spawnBody(), command_key: 'other' },
        ok: [422],
      }),
    () =>
      call('relay', 'spawn bad body', `${relay.url}/spawn`, {
        method: 'POST',
        headers: relayToken,
        body: { agent: 42 },
        ok: [400],
      }),
  ];

  /** A loop that takes the requests of `list` in turn, starting at `offset`, until the deadline. */
  const cycle = (list, offset) => async (deadline) => {
    for (let i = offset; Date.now() < deadline && !interrupted.aborted; i += 1) await list[i % list.length]();
  };
  /** A loop that runs `step` every `everyMs` until the deadline. */
  const paced = (step, everyMs) => async (deadline) => {
    while (Date.now() < deadline && !interrupted.aborted) {
      const t0 = Date.now();
      await step();
      await sleep(Math.max(0, Math.min(everyMs - (Date.now() - t0), deadline - Date.now())));
    }
  };
  const signIn = async () => {
    const answer = await call('hub', 'POST login', `${hub.url}/api/v1/auth/login`, {
      method: 'POST',
      body: { email: hub.email, password: hub.password },
    });
    const token = answer?.data?.token ?? answer?.token;
    if (token) session.token = token;
  };
  // A real spawn: the relay runs the built svc CLI, which refuses it on this host (no profile); any problem
  // answer of the contract is expected, a 5xx other than the relay's own spawn failure is not.
  const realSpawn = () =>
    call('relay', 'spawn through svc', `${relay.url}/spawn`, {
      method: 'POST',
      headers: relayToken,
      body: spawnBody(),
      ok: [200, 202, 400, 409, 422, 502, 503],
    });

  const all = [];
  for (let i = 0; i < concurrency; i += 1) {
    all.push(cycle(hubRequests, i * 2), cycle(workflowRequests, i * 2), cycle(routerRequests, i));
    all.push(cycle(relayRequests, i), async (deadline) => {
      while (Date.now() < deadline && !interrupted.aborted) await oneRun(deadline);
    });
  }
  all.push(paced(signIn, 5_000), paced(realSpawn, 5_000));
  return all;
}

async function runLoad(stack) {
  const deadline = Date.now() + loadMs;
  const delivered = stack.receiver.received();
  await Promise.all(loops(stack).map((loop) => loop(deadline)));
  return { deliveries: stack.receiver.received() - delivered };
}

// ---------------------------------------------------------------------------------------------------------------
// Report.

const worstIdle = (rows) => Math.max(...rows.filter(Boolean).map((r) => r.rss_mb));

function verdicts(result) {
  const out = {};
  for (const name of SERVICES) {
    const fresh = result.fresh[name];
    const idles = result.rounds.map((r) => r.idle[name]);
    if (!fresh || idles.some((r) => !r)) continue;
    const idleMax = worstIdle([fresh, ...idles]);
    const first = idles[0];
    const last = idles.at(-1);
    const growth = last.rss_mb - first.rss_mb;
    out[name] = {
      idle_max_mb: idleMax,
      idle_ok: idleMax < targetMb,
      growth_mb: growth,
      heap_used_growth_mb: last.heap_used_mb - first.heap_used_mb,
      growth_ok: result.rounds.length < 2 || growth <= growthMb,
    };
  }
  return out;
}

function printTable(result) {
  const m = result.machine;
  console.log(
    `\nService memory — ${result.settings.rounds} round(s) of ${result.settings.load_s} s load + ${result.settings.settle_s} s idle; ` +
      `node options: ${result.settings.node_options || '(none)'}; ` +
      `env: ${
        Object.entries(result.settings.launch_env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ') || '(none)'
      }; ${m.cpus}× ${m.model}, Node ${m.node}; ` +
      `load average ${f(m.load_average_1m.before, 2)} → ${f(m.load_average_1m.after, 2)}`,
  );
  console.log('\nRSS MB (V8 heap used MB) at each reading; peak = highest RSS sampled during the load');
  const head = [
    'fresh',
    ...result.rounds.flatMap((_, i) => [`r${i + 1} load`, `r${i + 1} peak`, `r${i + 1} idle`]),
  ];
  console.log(
    `| process | ${head.join(' | ')} | idle < ${targetMb} MB | growth r1→r${result.rounds.length} idle (heap) | verdict |`,
  );
  console.log(`|---|${head.map(() => '---:').join('|')}|---|---|---|`);
  for (const name of SERVICES) {
    const cell = (r) => (r ? `${f(r.rss_mb)} (${f(r.heap_used_mb)})` : '-');
    const cells = [cell(result.fresh[name])];
    for (const r of result.rounds) cells.push(cell(r.load[name]), f(r.peak[name]), cell(r.idle[name]));
    const v = result.verdicts[name];
    const verdict = !v ? 'not measured' : v.idle_ok && v.growth_ok ? 'met' : 'NOT met';
    console.log(
      `| ${name} | ${cells.join(' | ')} | ${v ? `${f(v.idle_max_mb)} ${v.idle_ok ? 'met' : 'NOT met'}` : '-'} | ` +
        `${v ? `${v.growth_mb >= 0 ? '+' : ''}${f(v.growth_mb)} (${v.heap_used_growth_mb >= 0 ? '+' : ''}${f(v.heap_used_growth_mb)}) ${v.growth_ok ? 'met' : 'NOT met'}` : '-'} | ${verdict} |`,
    );
  }
  console.log(
    '\nAt the last idle reading: RSS = anonymous + file-backed MB; V8 heap total, external, array buffers MB',
  );
  console.log('| process | RSS | anonymous | file | heap total | heap used | external | array buffers |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  const lastIdle = result.rounds.at(-1)?.idle ?? result.fresh;
  for (const name of SERVICES) {
    const r = lastIdle[name];
    if (!r) continue;
    console.log(
      `| ${name} | ${f(r.rss_mb)} | ${f(r.anon_mb)} | ${f(r.file_mb)} | ${f(r.heap_total_mb)} | ${f(r.heap_used_mb)} | ${f(r.external_mb)} | ${f(r.array_buffers_mb)} |`,
    );
  }
  console.log('\nRequests per round (all rounds together) and failures');
  for (const [service, t] of Object.entries(result.requests)) {
    const failures =
      Object.entries(t.failures)
        .map(([k, v]) => `${k}×${v}`)
        .join(', ') || 'none';
    console.log(`  ${service}: ${t.requests} requests; failures: ${failures}`);
  }
  console.log(`  deliveries received: ${result.rounds.map((r) => r.deliveries).join(' + ')}`);
  if (result.snapshots.length > 0) {
    console.log('\nHeap snapshots:');
    for (const s of result.snapshots) console.log(`  ${s.service}: ${s.file}`);
  }
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
      const { deliveries } = await runLoad(stack);
      const load = await readAll();
      const peak = peaks();
      if (interrupted.aborted) return;
      if (!args.json) console.error(`${NAME}: round ${round} loaded; idle for ${settleMs / 1000} s`);
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
        const { proc } = services.get(name);
        const answer = await probe(proc.child.pid, 'snapshot');
        if (!answer?.snapshot) continue;
        const file = path.join(snapshotDir, `${name}-${Date.now()}.heapsnapshot`);
        renameSync(answer.snapshot, file);
        result.snapshots.push({ service: name, file });
      }
    }
    result.requests = Object.fromEntries(
      [...tally.entries()].map(([service, t]) => [
        service,
        { requests: t.requests, failures: Object.fromEntries(t.failures), examples: t.examples },
      ]),
    );
    result.exited = [...services].filter(([, s]) => !s.proc.running()).map(([name]) => name);
    if (args.json) console.log(JSON.stringify(result, null, 2));
    else printTable(result);
    const failures = [...tally.values()].reduce(
      (n, t) => n + [...t.failures.values()].reduce((a, b) => a + b, 0),
      0,
    );
    if (failures > 0 || result.exited.length > 0) {
      failed = true;
      console.error(
        `${NAME}: ${failures} request(s) failed${result.exited.length ? `; exited: ${result.exited.join(', ')}` : ''}`,
      );
      for (const t of tally.values()) for (const e of t.examples) console.error(`  ${e}`);
      process.exitCode = 1;
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    if (failed && !interrupted.aborted)
      for (const [name, { proc, lines }] of services)
        printLines(`${name}${proc.running() ? '' : ' (exited)'}`, lines.summary());
    await teardown.tearDown();
  }
}

cli.run(main);
