#!/usr/bin/env node
// The console router side by side with nginx and configurable-http-proxy: same upstream, same client, same run.
// One file because the routers and proxies it starts are, in that order, the HTTP and WebSocket targets it
// measures; the stub hub, the upstream, the proxies and the report are modules in console-router/.
//
//   pnpm run build && node bench/console-router.mjs [--concurrency 32] [--duration 6] [--warmup 1] [--rounds 3]
//                                                  [--ws-connections 8] [--routes 10000] [--client auto|wrk|node]
//                                                  [--nginx PATH] [--nginx-workers 1] [--chp PATH]
//                                                  [--cpu-prof DIR] [--router-node-options '--flag …']
//                                                  [--node-floor] [--json]
//   node bench/console-router.mjs --consoles 10000 --streams 1000 [--propagation 20] [--routers 2] [--hold 30]
//                                 [--ping-ms 2000] [--stream-rate 40960] [--frame-bytes 4096]
//                                 [--stream-duration 10] [--json]
//
// One upstream stands in for an agent: a `node:http` server answering a fixed 64-byte JSON body to every request,
// with a `ws` WebSocket echo on the same port, in a thread of this process. In front of it, each on its own
// 127.0.0.1 port:
//   - our router (`apps/console-router/dist/main.js`, LOG_LEVEL=info, the default: nothing is logged per
//     forwarded request; started with the Node options and malloc setting it is deployed with) twice: with a route table of 10 routes and with one of `--routes` (10 000) routes, both
//     served by a stub hub in this process (route table with ETag and 304, JWKS of a key made here); every
//     request carries a participant JWT of a member, so the router's real credential check is measured;
//   - nginx (generated config in a temp dir: keep-alive upstream, HTTP/1.1, Upgrade/Connection for WebSockets,
//     access log off, `--nginx-workers` worker processes);
//   - configurable-http-proxy, its route added through its REST API.
// All proxies serve the agent at `/bench/agents/agt_target/…` and forward the rest of the path.
// HTTP: `wrk -t1 -c<concurrency>` (or, without wrk, the harness's closed loop over keep-alive connections), also
// straight to the upstream as the floor; WebSocket: `--ws-connections` connections per proxy, each sending a
// 64-byte message and awaiting its echo in a loop → messages/s. Every target is warmed up, then measured in
// alternating slices, each round starting one target further (a, b, c, b, c, a, c, a, b, …), so load changes on
// the machine hit all alike and no target always follows the same one. Route look-up: the
// router with 10 routes against the router with `--routes` routes (the target route sorted last). RSS: the
// large-table router's VmRSS, idle after loading its table and again after the measurements.
// `--node-floor` adds a reference to the HTTP slices: a Node process that pipes the bytes of each client
// connection to an upstream connection of its own and parses nothing — the least any proxy written in Node
// costs on these sockets. It is not a proxy the product could ship (no routing, no credential, no framing);
// it says how much of the gap to nginx is Node's own.
// Scale (`--consoles`, `--streams`, `--propagation`, any of them non-zero; decision 91): instead of the comparison,
// one router (limits raised to fit, its open-file limit raised with `prlimit` when it needs more), an agent
// process and client processes (at most 2 500 sockets each) measure idle consoles held (router RSS before, after
// and through `--hold` seconds of agent pings; RSS per console; file descriptors), streams at `--stream-rate`
// bytes/s each with the idle consoles still held (frame latency p50/p99, sent time in the frame) and route
// propagation (route added at the hub and POST /routes/refresh, as `svc start` does, to the first 200).
// `--routers N` (with `--propagation`): N routers over the same host's table, as `svc runtime up --routers N`
// runs them (decision 93); each start refreshes every router and the first 200 is timed on each, reported per
// router (`propagation.replicas` in `--json`) and until every router answered (`propagation.p50_ms` …).
// Targets (the issue's): HTTP requests/s ≥ 3× configurable-http-proxy's and p99 ≤ 0.5× its; WebSocket
// messages/s ≥ 1× its; 10 000 idle consoles < 300 MB; 1 000 streams at 40 KB/s with p99 < 50 ms; propagation
// p99 < 1 s. nginx is reported beside them, not a target; the route look-up and idle RSS lines are kept.
// A missed target is reported, not failed: the exit code is non-zero only when a request or message fails, a
// process exits early or set-up fails. nginx or configurable-http-proxy missing: its column is skipped (the
// script says how to install it). Every process, thread and temp dir is removed at the end, also on Ctrl-C.
// Only 127.0.0.1 is contacted; every loop is bounded by its deadline.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  assertBuilt,
  benchCli,
  fail,
  intBetween,
  load,
  requireFrom,
  root,
  run,
  testing,
} from './harness/cli.mjs';
import { alternate, echoClient, echoSlice, nodeSender } from './harness/load.mjs';
import { vmRssMb, withChildren } from './harness/proc.mjs';
import { errorList, printResult } from './harness/report.mjs';
import {
  DEPLOYED_ENV,
  DEPLOYED_NODE_OPTIONS,
  cleanupStack,
  cpuProfileArgs,
  findExecutable,
  reportCpuProfiles,
  sleep,
  tempDir,
  waitForAnswer,
} from './harness/stack.mjs';
import { wrkClient } from './harness/wrk.mjs';
import { startChp, startNginx, startNodePipe } from './console-router/proxies.mjs';
import { buildResult, buildScaleResult, printScaleText, printText } from './console-router/report.mjs';
import { PARTICIPANT, ROUTE, TARGET_AGENT, routeTable, startStubHub } from './console-router/stub-hub.mjs';
import { startUpstream } from './console-router/upstream.mjs';
import { runScale } from './console-router/scale.mjs';

const NAME = 'console-router';
const HTTP_PATH = '/global/health';
const WS_PATH = '/terminal';
const SMALL_TABLE = 10;
/** The upstream's answer: 64 bytes of JSON. */
const BODY = JSON.stringify({ ok: true, agent: TARGET_AGENT, pad: 'x'.repeat(27) });
const MESSAGE = 'm'.repeat(64);
/** How long a message or request may take before it counts as failed. */
const REQUEST_TIMEOUT_S = 10;

const options = benchCli(NAME, ({ flag, int, seconds, text }) => ({
  concurrency: int('32', 1, 1024),
  duration: seconds('6'),
  warmup: seconds('1'),
  rounds: int('3', 1, 100),
  'ws-connections': int('8', 1, 256),
  routes: int('10000', SMALL_TABLE, 100_000),
  client: text('auto'),
  nginx: text(),
  'nginx-workers': text('1'),
  chp: text(),
  'cpu-prof': text(),
  // Node options for every router: by default those it is deployed with (decision 55); another value
  // measures a launch setting's effect, an empty one (`--router-node-options=`) Node's defaults.
  'router-node-options': text(DEPLOYED_NODE_OPTIONS),
  'node-floor': flag(),
  consoles: int('0', 0, 100_000),
  streams: int('0', 0, 20_000),
  propagation: int('0', 0, 1_000),
  routers: int('1', 1, 8),
  // Up to an hour: `--hold 1800` is the 30-minute soak of idle consoles (RSS and descriptors flat).
  hold: seconds('10', 3600),
  'ping-ms': int('2000', 100, 600_000),
  'stream-rate': int('40960', 1024, 10_485_760),
  'frame-bytes': int('4096', 16, 1_048_576),
  'stream-duration': seconds('10'),
  json: flag(),
}));
const scaleMode = options.consoles > 0 || options.streams > 0 || options.propagation > 0;
const { concurrency, duration: durationMs, warmup: warmupMs, rounds, routes: largeTable } = options;
const wsConnections = options['ws-connections'];
if (!['auto', 'wrk', 'node'].includes(options.client)) fail('--client must be auto, wrk or node');
const nginxWorkers =
  options['nginx-workers'] === 'auto' ? 'auto' : intBetween(options['nginx-workers'], 'nginx-workers', 1, 64);
const profileDir = options['cpu-prof'] ? path.resolve(options['cpu-prof']) : undefined;
const routerNodeOptions = options['router-node-options'].split(/\s+/).filter(Boolean);
if (routerNodeOptions.some((option) => !option.startsWith('--')))
  fail('--router-node-options takes Node options only (each starting with --)');

assertBuilt(['apps/console-router/dist/main.js']);
const harness = testing();
const { createJwksDocument, createTokenIssuer, generateSigningKey } = load('packages/auth/dist/index.js');
const WebSocket = requireFrom('packages/agent-console', 'ws');

// The HTTP client: wrk when there is one (its own process, C), else the harness's loop in this process.
const wrk = options.client === 'node' ? undefined : findExecutable(undefined, 'wrk');
if (options.client === 'wrk' && !wrk) fail('wrk is not on PATH (apt-get install -y wrk)');
const client = wrk ? `wrk -t1 -c${concurrency}` : `node closed loop, ${concurrency} keep-alive connections`;
// Whole seconds per wrk run: wrk takes its duration in whole seconds.
const sliceS = wrk ? Math.max(1, Math.round(durationMs / rounds / 1000)) : durationMs / rounds / 1000;
const measuredMs = sliceS * rounds * 1000;
const warmS = wrk ? Math.max(1, Math.round(warmupMs / 1000)) : warmupMs / 1000;

/** nginx or configurable-http-proxy: the executable, or undefined (its column skipped, how to install it said). */
function tool(name, option, install) {
  const bin = findExecutable(options[option], name);
  if (!bin)
    console.error(
      `${NAME}: ${name} not found${options[option] ? ` at ${options[option]}` : ' on PATH'}; install it with ` +
        `\`${install}\` (or pass --${option} PATH). Its column is skipped.`,
    );
  return bin;
}
const nginxBin = scaleMode ? undefined : tool('nginx', 'nginx', 'apt-get install -y nginx');
const chpBin = scaleMode
  ? undefined
  : tool('configurable-http-proxy', 'chp', 'npm install -g configurable-http-proxy');
const skipped = [...(nginxBin ? [] : ['nginx']), ...(chpBin ? [] : ['configurable-http-proxy'])];

const teardown = cleanupStack(NAME, 'stopping the proxies and the upstream, removing the temp dir');
const { interrupted } = teardown;

/**
 * Our router over the stub hub's table of host `hostId` (`size` routes), on a free port, as deployed but for
 * `nodeArgs` and `env`; resolves once it is ready with every route loaded.
 */
async function startRouter(
  { hub, runtimeKey, upstreamSecret },
  size,
  hostId,
  nodeArgs,
  env = {},
  suffix = '',
) {
  const port = await harness.freePort();
  const label = `router (${size} routes${suffix})`;
  const start = teardown.logged(label, { nodeArgs });
  const proc = harness.startBuiltEntryPoint(
    path.join(root, 'apps/console-router'),
    'dist/main.js',
    {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      HUB_URL: hub.url,
      SVC_RUNTIME_INSTANCE_ID: hostId,
      SVC_WORKSPACE_API_KEY: runtimeKey,
      CONSOLE_ROUTER_HOST: '127.0.0.1',
      CONSOLE_ROUTER_PORT: String(port),
      CONSOLE_ROUTER_UPSTREAM_SECRET: upstreamSecret,
      ...DEPLOYED_ENV,
      ...env,
    },
    start,
  );
  teardown.track(proc, start, 15_000);
  const url = `http://127.0.0.1:${port}`;
  await harness.waitUntilReady(proc, url);
  const status = await fetch(`${url}/status`);
  const loaded = status.status === 200 ? (await status.json()).table?.routes : undefined;
  if (loaded !== size)
    throw new Error(`${label}: /status says ${loaded} routes loaded (HTTP ${status.status})`);
  return { proc, url, port, label };
}

/** `wsConnections` open WebSockets to the target, closed at tear-down, each as an echo client. */
async function echoClients(target) {
  const sockets = await Promise.all(
    Array.from(
      { length: wsConnections },
      () =>
        new Promise((resolve, reject) => {
          const ws = new WebSocket(target.url, {
            headers: target.headers,
            origin: 'http://127.0.0.1',
            perMessageDeflate: false,
          });
          ws.once('open', () => resolve(ws));
          ws.once('error', (error) =>
            reject(new Error(`${target.name}: WebSocket ${target.url}: ${error.message}`)),
          );
        }),
    ),
  );
  teardown.push(() => sockets.forEach((ws) => ws.terminate()));
  return sockets.map((ws) => echoClient(ws, MESSAGE));
}

/**
 * The scale phases (decision 91): one router over the stub hub, its open-file limit raised to fit two
 * descriptors per socket (as root, with `prlimit`; otherwise the limit it has is reported), then
 * `console-router/scale.mjs`.
 */
async function scale({ hub, tables, runtimeKey, authorization }) {
  const loadBefore = os.loadavg()[0];
  const needFds = 2 * (options.consoles + options.streams) + 1_024;
  const stack = { hub, runtimeKey, upstreamSecret: randomBytes(32).toString('base64url') };
  let fdLimit;
  const result = await runScale({
    teardown,
    tables,
    authorization,
    startRouter: async (hostId, env) => {
      const router = await startRouter(stack, 10, hostId, routerNodeOptions, env, ', scale');
      const pid = router.proc.child.pid;
      try {
        execFileSync('prlimit', [`--pid=${pid}`, `--nofile=${needFds}:${needFds}`], { stdio: 'ignore' });
      } catch {
        console.error(
          `${NAME}: could not raise the router's open-file limit to ${needFds} (prlimit, as root)`,
        );
      }
      try {
        fdLimit = Number(
          execFileSync('prlimit', [`--pid=${pid}`, '--nofile', '--raw', '--noheadings', '--output=SOFT'], {
            encoding: 'utf8',
          }).trim(),
        );
      } catch {
        fdLimit = undefined;
      }
      return { ...router, fdLimit: fdLimit ?? 20_000 };
    },
    settings: {
      consoles: options.consoles,
      streams: options.streams,
      propagation: options.propagation,
      routers: options.routers,
      holdMs: options.hold,
      pingMs: options['ping-ms'],
      streamRate: options['stream-rate'],
      frameBytes: options['frame-bytes'],
      streamMs: options['stream-duration'],
    },
  });
  const full = buildScaleResult({ loadBefore, loadAfter: os.loadavg()[0], result, fdLimit });
  printResult(full, options.json, printScaleText);
  if (full.problems.length > 0) process.exitCode = 1;
}

async function main() {
  const problems = [];
  const routers = [];
  try {
    const dir = tempDir(teardown, 'svc-console-router-bench-');
    chmodSync(dir, 0o755);

    const upstream = await startUpstream(BODY);
    teardown.push(() => upstream.close());
    const upstreamUrl = `http://127.0.0.1:${upstream.port}`;

    // Keys and the participant's credential, as the hub would issue them.
    const signingKey = generateSigningKey();
    const runtimeKey = `svc_bench_${randomBytes(24).toString('hex')}`;
    const hostIds = { small: 'rti_benchsmall', large: 'rti_benchlarge' };
    const tables = new Map([
      [hostIds.small, routeTable(hostIds.small, SMALL_TABLE, upstream.port)],
      [hostIds.large, routeTable(hostIds.large, largeTable, upstream.port)],
    ]);
    const hub = await startStubHub({ jwks: createJwksDocument([signingKey.publicJwk]), runtimeKey, tables });
    teardown.push(() => hub.close());
    const issuer = createTokenIssuer({
      issuer: hub.url,
      keys: [{ kid: signingKey.kid, privateKeyPem: signingKey.privateKeyPem }],
      activeKid: signingKey.kid,
    });
    const jwt = issuer.issue({
      audience: 'participant',
      subject: PARTICIPANT,
      ttlSeconds: 3600,
      claims: { email: 'bench@example.test' },
    }).token;
    const authorization = { authorization: `Bearer ${jwt}` };
    if (scaleMode) {
      await scale({ hub, tables, runtimeKey, authorization });
      return;
    }

    // Our router, twice: the small table and the large one.
    const stack = { hub, runtimeKey, upstreamSecret: randomBytes(32).toString('base64url') };
    const router = async (...args) => {
      const started = await startRouter(stack, ...args);
      routers.push(started);
      return started;
    };
    const routerSmall = await router(SMALL_TABLE, hostIds.small, [
      ...routerNodeOptions,
      ...cpuProfileArgs(profileDir),
    ]);
    const routerLarge = await router(largeTable, hostIds.large, routerNodeOptions);
    await sleep(2_000);
    const rssIdleMb = vmRssMb(routerLarge.proc.child.pid);
    const rssSmallIdleMb = vmRssMb(routerSmall.proc.child.pid);

    // nginx, configurable-http-proxy and the Node floor (`--node-floor`), each answering the upstream's body.
    const check = { path: `${ROUTE}${HTTP_PATH}`, body: BODY };
    const nginx = nginxBin
      ? await startNginx(teardown, check, {
          bin: nginxBin,
          dir,
          upstreamPort: upstream.port,
          workers: nginxWorkers,
        })
      : undefined;
    const chp = chpBin ? await startChp(teardown, check, { bin: chpBin, upstreamUrl }) : undefined;
    const nodePipe = options['node-floor']
      ? await startNodePipe(teardown, check, { upstreamPort: upstream.port })
      : undefined;

    // Every proxy answers the upstream's body; the router only with the credential.
    for (const { proc, url } of [routerSmall, routerLarge]) {
      await waitForAnswer(proc, `${url}${ROUTE}${HTTP_PATH}`, { headers: authorization, body: BODY });
      await waitForAnswer(proc, `${url}${ROUTE}${HTTP_PATH}`, { status: 401 });
    }

    const named = (key, name, url, headers = {}) => ({ key, name, url, headers });
    const routerTarget = named('router', `router, ${SMALL_TABLE} routes`, routerSmall.url, authorization);
    const nginxTarget = nginx && named('nginx', `nginx (${nginxWorkers} worker)`, nginx.url);
    const chpTarget = chp && named('chp', 'configurable-http-proxy', chp.url);
    const httpTargets = [
      routerTarget,
      named('router_large', `router, ${largeTable} routes`, routerLarge.url, authorization),
      nginxTarget,
      chpTarget,
      nodePipe && named('node_pipe', 'Node byte pipe (reference: parses nothing)', nodePipe.url),
    ]
      .filter(Boolean)
      .map((t) => ({ ...t, url: `${t.url}${ROUTE}${HTTP_PATH}` }));
    httpTargets.push(named('upstream', 'upstream direct (floor)', `${upstreamUrl}${HTTP_PATH}`));
    const pidsOf = {
      router: [routerSmall.proc.child.pid],
      router_large: [routerLarge.proc.child.pid],
      nginx: nginx && withChildren(nginx.proc.child.pid),
      chp: chp && [chp.proc.child.pid],
      node_pipe: nodePipe && [nodePipe.proc.child.pid],
    };
    for (const t of httpTargets) t.pids = pidsOf[t.key];

    const loadBefore = os.loadavg()[0];
    const slices = {
      warmupMs: warmS * 1000,
      durationMs: measuredMs,
      rounds,
      rotate: true,
      cpu: true,
      interrupted,
    };

    // HTTP.
    const wrkRun =
      wrk && wrkClient(wrk, { dir, concurrency, timeoutS: REQUEST_TIMEOUT_S, signal: interrupted });
    const agents = new Map();
    const runHttpSlice = async (target, ms, record) => {
      if (wrkRun)
        return wrkRun.run({ url: target.url, headers: target.headers, seconds: record ? sliceS : warmS });
      if (!agents.has(target.key))
        agents.set(
          target.key,
          new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency }),
        );
      const send = nodeSender(target.url, {
        agent: agents.get(target.key),
        request: () => ({ headers: target.headers }),
        timeoutMs: REQUEST_TIMEOUT_S * 1000,
      });
      return harness.closedLoop(send, {
        concurrency,
        limit: { durationMs: record ? ms : warmS * 1000 },
        record,
      });
    };
    const httpResults = await alternate(httpTargets, { ...slices, runSlice: runHttpSlice });
    for (const agent of agents.values()) agent.destroy();
    if (!httpResults) return;

    // WebSocket echo.
    const wsTargets = [routerTarget, nginxTarget, chpTarget]
      .filter(Boolean)
      .map((t) => ({ ...t, url: `${t.url.replace(/^http/, 'ws')}${ROUTE}${WS_PATH}`, pids: pidsOf[t.key] }));
    wsTargets.push(
      named('upstream', 'upstream direct (floor)', `${upstreamUrl.replace(/^http/, 'ws')}${WS_PATH}`),
    );
    for (const target of wsTargets) target.clients = await echoClients(target);
    const wsResults = await alternate(wsTargets, {
      ...slices,
      runSlice: (target, ms, record) => echoSlice(target.clients, ms, record, REQUEST_TIMEOUT_S * 1000),
    });
    if (!wsResults) return;
    for (const target of wsTargets) target.clients.forEach((c) => c.ws.close());

    await sleep(2_000);
    const rssAfterMb = vmRssMb(routerLarge.proc.child.pid);
    const loadAfter = os.loadavg()[0];

    for (const [label, proc] of [
      [routerSmall.label, routerSmall.proc],
      [routerLarge.label, routerLarge.proc],
      ['nginx', nginx?.proc],
      ['configurable-http-proxy', chp?.proc],
      ['the Node byte pipe', nodePipe?.proc],
    ])
      if (proc && !proc.running()) problems.push(`${label} exited during the measurements`);
    for (const r of [...httpResults, ...wsResults])
      if (Object.keys(r.errors).length > 0) problems.push(`${r.name}: failures ${errorList(r.errors)}`);

    const result = buildResult({
      loadBefore,
      loadAfter,
      settings: {
        client,
        concurrency,
        duration_s: measuredMs / 1000,
        warmup_s: warmS,
        rounds,
        ws_connections: wsConnections,
        routes_small: SMALL_TABLE,
        routes_large: largeTable,
        nginx_workers: nginxWorkers,
        router_node_options: routerNodeOptions.join(' '),
        node_floor: options['node-floor'],
      },
      skipped,
      httpResults,
      wsResults,
      rss: { idle_mb: rssIdleMb, after_load_mb: rssAfterMb, small_table_idle_mb: rssSmallIdleMb },
      hub: hub.counts,
      problems,
    });
    result.router_logs = Object.fromEntries(routers.map((r) => [r.label, teardown.written(r.proc)]));
    printResult(result, options.json, printText);

    if (problems.length > 0) {
      console.error(`${NAME}: ${problems.length} problem(s):`);
      for (const problem of problems) console.error(`  ${problem}`);
      teardown.printOutputs({ exited: false });
      process.exitCode = 1;
    }
    if (profileDir)
      await reportCpuProfiles(
        NAME,
        routerSmall.proc,
        profileDir,
        `CPU profile(s) of the ${SMALL_TABLE}-route router`,
      );
  } catch (error) {
    teardown.printOutputs({ exited: false });
    throw error;
  } finally {
    await teardown.tearDown();
  }
}

run(main);
