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
import os from 'node:os';
import { benchCli, load, requireFrom, run, testing } from './harness/cli.mjs';
import { insertRows } from './harness/data-stores.mjs';
import { f, loadChange, machine, printLoadTable, printResult, targetLine } from './harness/report.mjs';
import { createBenchWorkspace, redisUrl } from './harness/stack.mjs';

const TARGET_P99_MS = 5;
const TARGET_RATIO = 1.5;

const options = benchCli('workflow-resolve', ({ flag, int }) => ({
  contracts: int('10000', 1, 200_000),
  requests: int('4000', 10, 1_000_000),
  warmup: int('500', 0, 1_000_000),
  concurrency: int('1', 1, 256),
  rounds: int('4', 1, 100),
  json: flag(),
}));
const {
  contracts: contractCount,
  requests: requestCount,
  warmup: warmupCount,
  concurrency,
  rounds,
} = options;

const harness = testing();
const { newId } = load('packages/service-kit/dist/index.js');
const pg = requireFrom('apps/workflow-api', 'pg');

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
    await insertRows(
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
      await insertRows(client, 'workflow_contracts', columns, rows.slice(at, at + 1000));
    }
    return rows[0][0];
  } finally {
    await client.end();
  }
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

async function main() {
  const [hubDb, workflowDb] = await Promise.all([
    harness.createHubDatabase('svc_hub_bench'),
    harness.createWorkflowDatabase('svc_workflow_bench'),
  ]);
  let hub;
  let workflow;
  try {
    const serviceToken = harness.newServiceToken();
    // Every process logs each request at info, to /dev/null.
    const quiet = { stdout: 'ignore', outputLimit: 4000 };
    hub = await harness.startHub({
      databaseUrl: hubDb.url,
      serviceToken,
      logLevel: 'info',
      env: { NODE_ENV: 'production' },
      process: quiet,
    });
    const owner = await createBenchWorkspace(hub.url, hubDb.url);
    const project = await owner.createProject('BENCH', 'Benchmark');
    const key = await owner.createApiKey(['workflow-contracts:read'], 'bench');

    const seedStarted = performance.now();
    const firstContract = await seed(workflowDb.url, owner.workspace.id, project.id);
    const seedMs = performance.now() - seedStarted;

    const wf = await harness.workflowEnv({
      databaseUrl: workflowDb.url,
      redisUrl,
      queuePrefix: harness.uniqueQueuePrefix('bench'),
      hubUrl: hub.url,
      serviceToken,
      logLevel: 'info',
      env: { NODE_ENV: 'production' },
    });
    workflow = await harness.startWorkflowApi(wf, quiet);

    const headers = { 'x-api-key': key };
    const base = `${wf.url}/api/v1/projects/${project.id}/workflow`;
    const resolveRequest = (i) => ({
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: resolveBody(i),
    });
    const compileStarted = performance.now();
    const first = await fetch(`${base}/resolve-intent`, resolveRequest(0));
    const firstBody = await first.json();
    const firstResolveMs = performance.now() - compileStarted;
    if (first.status !== 200 || firstBody.data?.matched !== true) {
      throw new Error(`resolve answered ${first.status} ${JSON.stringify(firstBody).slice(0, 300)}`);
    }

    const loadBefore = os.loadavg()[0];
    const [get, resolve] = await harness.measureAlternating(
      [
        {
          name: 'GET …/workflow/contracts/{id}',
          send: harness.httpSender(`${base}/contracts/${firstContract}`, { init: () => ({ headers }) }),
        },
        {
          name: 'POST …/workflow/resolve-intent',
          send: harness.httpSender(`${base}/resolve-intent`, {
            init: (i) => resolveRequest(i + 1),
            check: (text) => text.includes('"matched":true'),
          }),
        },
      ],
      {
        concurrency,
        rounds,
        warmup: { count: warmupCount },
        slice: { count: Math.ceil(requestCount / rounds) },
      },
    );
    const ratio = resolve.p99_ms / get.p99_ms;
    const errorCount = harness.countErrors([get, resolve]);
    const result = {
      date: new Date().toISOString(),
      machine: machine(loadBefore),
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
    printResult(result, options.json, () => {
      console.log(
        `workflow resolve — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
          `${contractCount + 1} active contracts (seeded in ${f(seedMs / 1000, 1)} s), ${concurrency} in flight, ` +
          `${requestCount} requests per route in ${rounds} alternating slices after ${warmupCount} warm-up, ` +
          `load average ${loadChange(result.machine.load_average_1m)}`,
      );
      console.log(
        `first resolve (loads and compiles the classifiers): ${f(firstResolveMs, 0)} ms, ` +
          `${result.first_resolve_candidates} candidates listed`,
      );
      console.log('');
      printLoadTable('route', result.results);
      console.log('');
      const met = result.targets_met;
      console.log(
        targetLine(`resolve p99 ${f(resolve.p99_ms, 2)} ms`, `< ${TARGET_P99_MS} ms`, met.resolve_p99),
      );
      console.log(targetLine(`p99 ratio resolve/get: ${f(ratio, 2)}×`, `≤ ${TARGET_RATIO}×`, met.p99_ratio));
    });
    if (errorCount > 0) {
      console.error(`workflow-resolve: ${errorCount} request(s) failed`);
      process.exitCode = 1;
    }
  } finally {
    await workflow?.stop();
    await hub?.process.stop();
    await Promise.all([workflowDb.drop(), hubDb.drop()]);
  }
}

run(main);
