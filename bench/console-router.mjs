#!/usr/bin/env node
// The console router side by side with nginx and configurable-http-proxy: same upstream, same client, same run.
//
//   pnpm run build && node bench/console-router.mjs [--concurrency 32] [--duration 6] [--warmup 1] [--rounds 3]
//                                                  [--ws-connections 8] [--routes 10000] [--client auto|wrk|node]
//                                                  [--nginx PATH] [--nginx-workers 1] [--chp PATH]
//                                                  [--cpu-prof DIR] [--router-node-options '--flag …']
//                                                  [--compare-forwarding] [--node-floor] [--json]
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
// `--compare-forwarding` adds two routers (10 routes) to the HTTP slices, one per earlier way of forwarding plain
// HTTP: requests read by node:http and forwarded on the router's pooled connections
// (`CONSOLE_ROUTER_HTTP_FORWARDING=pooled`, decision 63), and http-proxy-3 (`…=http-proxy-3`, before it); it
// prints the default path's (`direct`, decision 65) requests/s and CPU per request against each.
// `--node-floor` adds a reference to the HTTP slices: a Node process that pipes the bytes of each client
// connection to an upstream connection of its own and parses nothing — the least any proxy written in Node
// costs on these sockets. It is not a proxy the product could ship (no routing, no credential, no framing);
// it says how much of the gap to nginx is Node's own.
// Targets: router p99 ≤ 1.2× nginx's and requests/s ≥ 0.8× nginx's; requests/s ≥ 1.0× configurable-http-proxy's;
// WebSocket messages/s ≥ configurable-http-proxy's; the large table within ±10 % of the small one; RSS < 120 MB.
// A missed target is reported, not failed: the exit code is non-zero only when a request or message fails, a
// process exits early or set-up fails. nginx or configurable-http-proxy missing: its column is skipped (the
// script says how to install it). Every process, thread and temp dir is removed at the end, also on Ctrl-C.
// Only 127.0.0.1 is contacted; every loop is bounded by its deadline.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  chmodSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker as Thread, isMainThread, parentPort, workerData } from 'node:worker_threads';
import {
  DEPLOYED_ENV,
  DEPLOYED_NODE_OPTIONS,
  benchArgs,
  benchCli,
  cleanupStack,
  errorList,
  f,
  lineCounter,
  machine,
  printLines,
  root,
} from './support.mjs';

const NAME = 'console-router';
const TARGETS = {
  p99VsNginx: 1.2,
  rpsVsNginx: 0.8,
  rpsVsChp: 1.0,
  wsVsChp: 1.0,
  lookupBand: 0.1,
  rssMb: 120,
};
const WORKSPACE = { id: 'ws_bench', slug: 'bench' };
const PARTICIPANT = 'prt_bench';
const TARGET_AGENT = 'agt_target';
const ROUTE = `/${WORKSPACE.slug}/agents/${TARGET_AGENT}`;
const HTTP_PATH = '/global/health';
const WS_PATH = '/terminal';
const SMALL_TABLE = 10;
/** The upstream's answer: 64 bytes of JSON. */
const BODY = JSON.stringify({ ok: true, agent: TARGET_AGENT, pad: 'x'.repeat(27) });
const MESSAGE = 'm'.repeat(64);
/** How long a message or request may take before it counts as failed. */
const REQUEST_TIMEOUT_S = 10;
const execFileAsync = promisify(execFile);
/**
 * The Node floor (`--node-floor`), run as `node -e <script> <port> <upstream port>`: one upstream connection per
 * client connection, bytes piped both ways, nothing parsed; either side closing closes the other.
 */
const NODE_PIPE_SCRIPT = `
const net = require('node:net');
const [port, upstreamPort] = process.argv.slice(1).map(Number);
const server = net.createServer((client) => {
  const upstream = net.connect(upstreamPort, '127.0.0.1');
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------
// The upstream: runs in a worker thread, so the load generators do not share its event loop.

function upstreamThread() {
  const { WebSocketServer } = benchCli(NAME).requireFrom('packages/agent-console', 'ws');
  const body = Buffer.from(workerData.body);
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
  // Proxies keep pooled connections open between slices; the upstream must not close them under their feet.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    ws.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
}

async function startUpstream() {
  const thread = new Thread(new URL(import.meta.url), { workerData: { body: BODY } });
  const port = await new Promise((resolve, reject) => {
    thread.once('message', (message) => resolve(message.port));
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`the upstream thread exited (${code})`)));
  });
  return { port, close: () => thread.terminate() };
}

// ---------------------------------------------------------------------------------------------------------------
// The stub hub: the host's console route table (ETag, 304 on If-None-Match, as the hub answers) and the JWKS.

function routeTable(hostId, size, echoPort) {
  const routes = [];
  // Ports of agents that are not listening: distinct, never the upstream's; the router only connects on a request.
  let port = 20_000;
  for (let i = 0; i < size - 1; i += 1) {
    if (port === echoPort) port += 1;
    const agentId = `agt_filler${String(i).padStart(5, '0')}`;
    routes.push({
      agent_id: agentId,
      agent_name: `filler ${i}`,
      route: `/${WORKSPACE.slug}/agents/${agentId}`,
      serve_port: port,
      status: 'idle',
      peers: [],
    });
    port += 1;
  }
  routes.push({
    agent_id: TARGET_AGENT,
    agent_name: 'target',
    route: ROUTE,
    serve_port: echoPort,
    status: 'online',
    peers: [],
  });
  // Sorted by route as the hub sends them: `agt_target` comes last, the worst place for a scan.
  routes.sort((a, b) => (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
  const content = { host_id: hostId, workspace: WORKSPACE, members: [PARTICIPANT], routes };
  const version = createHash('sha256').update(JSON.stringify(content)).digest('hex');
  return {
    version,
    body: JSON.stringify({ data: { ...content, version, generated_at: new Date().toISOString() } }),
  };
}

async function startStubHub({ jwks, runtimeKey, tables }) {
  const counts = { jwks: 0, table: 0, not_modified: 0, refused: 0 };
  const jwksBody = JSON.stringify(jwks);
  const server = http.createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status, body, headers = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
    if (req.method === 'GET' && url.pathname === '/.well-known/jwks.json') {
      counts.jwks += 1;
      return json(200, jwksBody);
    }
    const match = /^\/api\/v1\/runtime-hosts\/([^/]+)\/console-routes$/.exec(url.pathname);
    const table = match && tables.get(match[1]);
    if (req.method === 'GET' && table) {
      const bearer = req.headers.authorization?.replace(/^Bearer /i, '');
      if (req.headers['x-api-key'] !== runtimeKey && bearer !== runtimeKey) {
        counts.refused += 1;
        return json(401, JSON.stringify({ code: 'credential_invalid' }));
      }
      const etag = `"${table.version}"`;
      const seen = (req.headers['if-none-match'] ?? '').split(',').map((v) => v.trim().replace(/^W\//, ''));
      if (seen.includes(etag) || seen.includes(table.version)) {
        counts.not_modified += 1;
        return res.writeHead(304, { etag }).end();
      }
      counts.table += 1;
      return json(200, table.body, { etag });
    }
    json(404, JSON.stringify({ code: 'not_found' }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    counts,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Processes that are not Node entry points of this repository (nginx, configurable-http-proxy).

function startTool(name, command, args, env = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => (output = (output + chunk).slice(-8000)));
  }
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1));
    child.once('error', (error) => resolve(error.message));
  });
  const running = () => child.exitCode === null && child.signalCode === null && child.pid !== undefined;
  return {
    name,
    child,
    exited,
    running,
    output: () => output,
    async stop(signal = 'SIGTERM', withinMs = 10_000) {
      if (running()) child.kill(signal);
      const code = await Promise.race([exited, sleep(withinMs).then(() => 'timeout')]);
      if (code === 'timeout') child.kill('SIGKILL');
      return code;
    },
  };
}

/** An executable: the given path, or the first `name` on PATH (and the usual sbin folders); undefined if none. */
function findExecutable(given, name) {
  const candidates = given
    ? [path.resolve(given)]
    : [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin']
        .filter(Boolean)
        .map((dir) => path.join(dir, name));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Polls `url` until it answers `status` with `body` (when given); fails when `proc` exits or time is up. */
async function waitForAnswer(proc, url, { headers = {}, status = 200, body, timeoutMs = 20_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let exit;
  void proc.exited.then((code) => (exit = code));
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exit !== undefined)
      throw new Error(`${proc.name} exited during start-up (${exit}):\n${proc.output()}`);
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      const text = await res.text();
      if (res.status === status && (body === undefined || text === body)) return;
      last = `HTTP ${res.status} ${text.slice(0, 200)}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    await sleep(100);
  }
  throw new Error(`${proc.name} did not answer ${status} at ${url} within ${timeoutMs / 1000} s (${last})`);
}

function nginxConfig({ dir, port, upstreamPort, workers }) {
  // Temp files, pid and logs stay in the bench's temp dir; as root the workers keep the master's user so they
  // can use it (the bench runs on loopback only).
  const user = process.getuid?.() === 0 ? `user ${os.userInfo().username};\n` : '';
  return `${user}worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # Node servers keep connections open without a request limit; nginx's default of 1000 would reconnect.
  keepalive_requests 1000000;
  upstream agent {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
  server {
    listen 127.0.0.1:${port};
    location ${ROUTE}/ {
      proxy_pass http://agent/;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_read_timeout 1h;
    }
  }
}
`;
}

// ---------------------------------------------------------------------------------------------------------------
// /proc: memory and CPU time of a process (and its children: nginx's workers).

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function vmRssMb(pid) {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The pid and its direct children (nginx's master and workers). */
function withChildren(pid) {
  const pids = [pid];
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (Number(statFields(entry)[1]) === pid) pids.push(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return pids;
}

/** CPU milliseconds (user + system) these processes have used so far; undefined without /proc. */
function cpuMs(pids) {
  if (!pids) return undefined;
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = statFields(pid);
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
    } catch {
      return undefined;
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------------------------------
// Clients: wrk (or the harness's closed loop) for HTTP, a `ws` echo loop for WebSockets.

/** wrk's full latency histogram (microseconds, count) and its summary, printed when a run is done. */
const WRK_SCRIPT = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("@@summary %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout))
  for i = 1, #latency do
    local value, count = latency(i)
    io.write(string.format("@@latency %d %d\\n", value, count))
  end
end
`;

function parseWrk(stdout) {
  const summary = /^@@summary (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/m.exec(stdout);
  if (!summary) throw new Error(`cannot read wrk's output:\n${stdout.slice(0, 2000)}`);
  const [requests, durationUs, connect, read, write, status, timeout] = summary.slice(1).map(Number);
  const latencies = [];
  for (const [, value, count] of stdout.matchAll(/^@@latency (\d+) (\d+)$/gm))
    for (let i = 0; i < Number(count); i += 1) latencies.push(Number(value) / 1000);
  const errors = new Map(
    Object.entries({ connect, read, write, 'non-2xx': status, timeout }).filter(([, n]) => n > 0),
  );
  // The histogram holds every answered request; answers that were not 2xx/3xx are also counted as errors (and
  // fail the run).
  return { latencies, errors, elapsedMs: durationUs / 1000, requests };
}

function nodeHttpSender(url, headers, agent) {
  const target = new URL(url);
  return () =>
    new Promise((resolve) => {
      const req = http.request(
        { host: target.hostname, port: target.port, path: target.pathname, headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200 ? null : `HTTP ${res.statusCode}`));
          res.on('error', (error) => resolve(error.code ?? 'error'));
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_S * 1000, () =>
        req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })),
      );
      req.on('error', (error) => resolve(error.code ?? 'error'));
      req.end();
    });
}

/** One `ws` connection that sends a message and awaits its echo. */
function echoClient(ws) {
  let waiter;
  const settle = (failure) => {
    const resolve = waiter;
    waiter = undefined;
    resolve?.(failure);
  };
  ws.on('message', (data) => settle(data.length === MESSAGE.length ? null : 'bad echo'));
  ws.on('close', () => settle('closed'));
  ws.on('error', () => undefined);
  return {
    ws,
    open: () => ws.readyState === ws.OPEN,
    roundTrip: () =>
      new Promise((resolve) => {
        waiter = resolve;
        ws.send(MESSAGE);
      }),
    /** Ends a wait that will never be answered (the slice's time limit). */
    abandon: () => settle('timeout'),
  };
}

async function wsSlice(clients, durationMs, record) {
  const latencies = [];
  const errors = new Map();
  const started = performance.now();
  const deadline = started + durationMs;
  const limit = setTimeout(() => clients.forEach((c) => c.abandon()), durationMs + REQUEST_TIMEOUT_S * 1000);
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < deadline && client.open()) {
        const t0 = performance.now();
        const failure = await client.roundTrip();
        if (failure !== null) {
          errors.set(failure, (errors.get(failure) ?? 0) + 1);
          break;
        }
        if (record) latencies.push(performance.now() - t0);
      }
    }),
  );
  clearTimeout(limit);
  const elapsedMs = performance.now() - started;
  return { latencies, errors, elapsedMs };
}

/**
 * Warms every target up, then measures them in alternating slices, each round starting one target further
 * (a, b, c, b, c, a, c, a, b, …) so that no target always follows the same one; each target's slices add up to
 * `durationMs`. With the CPU time its proxy processes used while it was measured.
 */
async function alternate(targets, { warmupMs, durationMs, rounds, runSlice, summarize, interrupted }) {
  for (const target of targets) {
    if (interrupted.aborted) return undefined;
    await runSlice(target, warmupMs, false);
  }
  const totals = targets.map(() => ({ latencies: [], errors: new Map(), elapsedMs: 0, cpuMs: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (let k = 0; k < targets.length; k += 1) {
      const i = (k + round) % targets.length;
      const target = targets[i];
      if (interrupted.aborted) return undefined;
      const cpuBefore = cpuMs(target.pids);
      const run = await runSlice(target, durationMs / rounds, true);
      const cpuAfter = cpuMs(target.pids);
      const total = totals[i];
      for (const latency of run.latencies) total.latencies.push(latency);
      for (const [label, n] of run.errors) total.errors.set(label, (total.errors.get(label) ?? 0) + n);
      total.elapsedMs += run.elapsedMs;
      total.cpuMs =
        cpuBefore === undefined || cpuAfter === undefined ? NaN : total.cpuMs + cpuAfter - cpuBefore;
    }
  }
  return targets.map((target, i) => {
    const summary = summarize(target.name, totals[i]);
    return {
      key: target.key,
      ...summary,
      cpu_ms_per_1000: target.pids ? (totals[i].cpuMs / summary.requests) * 1000 : null,
    };
  });
}

// ---------------------------------------------------------------------------------------------------------------

async function runBench() {
  const cli = benchCli(NAME);
  const { values: args } = benchArgs('console-router', {
    options: {
      concurrency: { type: 'string', default: '32' },
      duration: { type: 'string', default: '6' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      'ws-connections': { type: 'string', default: '8' },
      routes: { type: 'string', default: '10000' },
      client: { type: 'string', default: 'auto' },
      nginx: { type: 'string' },
      'nginx-workers': { type: 'string', default: '1' },
      chp: { type: 'string' },
      'cpu-prof': { type: 'string' },
      // Node options for every router: by default those it is deployed with (decision 55); another value
      // measures a launch setting's effect, an empty one (`--router-node-options=`) Node's defaults.
      'router-node-options': { type: 'string', default: DEPLOYED_NODE_OPTIONS },
      'compare-forwarding': { type: 'boolean', default: false },
      'node-floor': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const concurrency = cli.intBetween(args.concurrency, 'concurrency', 1, 1024);
  const durationMs = cli.seconds(args.duration, 'duration');
  const warmupMs = cli.seconds(args.warmup, 'warmup');
  const rounds = cli.intBetween(args.rounds, 'rounds', 1, 100);
  const wsConnections = cli.intBetween(args['ws-connections'], 'ws-connections', 1, 256);
  const largeTable = cli.intBetween(args.routes, 'routes', SMALL_TABLE, 100_000);
  if (!['auto', 'wrk', 'node'].includes(args.client)) cli.fail('--client must be auto, wrk or node');
  const nginxWorkers =
    args['nginx-workers'] === 'auto' ? 'auto' : cli.intBetween(args['nginx-workers'], 'nginx-workers', 1, 64);
  const profileDir = args['cpu-prof'] ? path.resolve(args['cpu-prof']) : undefined;
  const routerNodeOptions = args['router-node-options'].split(/\s+/).filter(Boolean);
  if (routerNodeOptions.some((option) => !option.startsWith('--')))
    cli.fail('--router-node-options takes Node options only (each starting with --)');

  cli.assertBuilt(['apps/console-router/dist/main.js']);
  const harness = cli.load('packages/testing/dist/index.js');
  const { createJwksDocument, createTokenIssuer, generateSigningKey } = cli.load(
    'packages/auth/dist/index.js',
  );
  const WebSocket = cli.requireFrom('packages/agent-console', 'ws');

  // The HTTP client: wrk when there is one (its own process, C), else the harness's loop in this process.
  const wrk = args.client === 'node' ? undefined : findExecutable(undefined, 'wrk');
  if (args.client === 'wrk' && !wrk) cli.fail('wrk is not on PATH (apt-get install -y wrk)');
  const client = wrk ? `wrk -t1 -c${concurrency}` : `node closed loop, ${concurrency} keep-alive connections`;
  // Whole seconds per wrk run: wrk takes its duration in whole seconds.
  const sliceS = wrk ? Math.max(1, Math.round(durationMs / rounds / 1000)) : durationMs / rounds / 1000;
  const measuredMs = sliceS * rounds * 1000;
  const warmS = wrk ? Math.max(1, Math.round(warmupMs / 1000)) : warmupMs / 1000;

  const nginxBin = findExecutable(args.nginx, 'nginx');
  const chpBin = findExecutable(args.chp, 'configurable-http-proxy');
  const skipped = [];
  if (!nginxBin) {
    skipped.push('nginx');
    console.error(
      `${NAME}: nginx not found${args.nginx ? ` at ${args.nginx}` : ' on PATH'}; install it with ` +
        '`apt-get install -y nginx` (or pass --nginx PATH). Its column is skipped.',
    );
  }
  if (!chpBin) {
    skipped.push('configurable-http-proxy');
    console.error(
      `${NAME}: configurable-http-proxy not found${args.chp ? ` at ${args.chp}` : ' on PATH'}; install it with ` +
        '`npm install -g configurable-http-proxy` (or pass --chp PATH). Its column is skipped.',
    );
  }

  const teardown = cleanupStack(NAME, 'stopping the proxies and the upstream, removing the temp dir');
  const { interrupted } = teardown;
  const problems = [];
  const routerLines = new Map();
  try {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-console-router-bench-'));
    chmodSync(dir, 0o755);
    teardown.push(() => rmSync(dir, { recursive: true, force: true }));

    const upstream = await startUpstream();
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
    const hub = await startStubHub({
      jwks: createJwksDocument([signingKey.publicJwk]),
      runtimeKey,
      tables,
    });
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

    // Our router, twice: the small table and the large one.
    const upstreamSecret = randomBytes(32).toString('base64url');
    const startRouter = async (size, hostId, nodeArgs, env = {}, suffix = '') => {
      const port = await harness.freePort();
      const lines = lineCounter();
      const label = `router (${size} routes${suffix})`;
      routerLines.set(label, lines);
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
        { name: label, nodeArgs, outputLimit: 16_000, onLine: (line) => lines.add(line) },
      );
      teardown.procs.push({ stop: () => proc.stop('SIGTERM', 15_000) });
      const url = `http://127.0.0.1:${port}`;
      await harness.waitUntilReady(proc, url);
      const status = await fetch(`${url}/status`);
      const loaded = status.status === 200 ? (await status.json()).table?.routes : undefined;
      if (loaded !== size)
        throw new Error(`${label}: /status says ${loaded} routes loaded (HTTP ${status.status})`);
      return { proc, url, port, label };
    };
    const routerSmall = await startRouter(SMALL_TABLE, hostIds.small, [
      ...routerNodeOptions,
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ]);
    const routerLarge = await startRouter(largeTable, hostIds.large, routerNodeOptions);
    const startWay = (way) =>
      startRouter(
        SMALL_TABLE,
        hostIds.small,
        routerNodeOptions,
        { CONSOLE_ROUTER_HTTP_FORWARDING: way },
        `, ${way}`,
      );
    const routerPooled = args['compare-forwarding'] ? await startWay('pooled') : undefined;
    const routerLibrary = args['compare-forwarding'] ? await startWay('http-proxy-3') : undefined;
    const comparedRouters = [routerPooled, routerLibrary].filter(Boolean);
    await sleep(2_000);
    const rssIdleMb = vmRssMb(routerLarge.proc.child.pid);
    const rssSmallIdleMb = vmRssMb(routerSmall.proc.child.pid);

    // nginx.
    let nginx;
    if (nginxBin) {
      const port = await harness.freePort();
      const conf = path.join(dir, 'nginx.conf');
      writeFileSync(conf, nginxConfig({ dir, port, upstreamPort: upstream.port, workers: nginxWorkers }));
      const proc = startTool('nginx', nginxBin, ['-p', dir, '-c', conf, '-e', 'stderr', '-g', 'daemon off;']);
      teardown.procs.push({ stop: () => proc.stop('SIGTERM', 10_000) });
      const url = `http://127.0.0.1:${port}`;
      await waitForAnswer(proc, `${url}${ROUTE}${HTTP_PATH}`, { body: BODY });
      nginx = { proc, url };
    }

    // configurable-http-proxy, its route added through its REST API.
    let chp;
    if (chpBin) {
      const [port, apiPort] = [await harness.freePort(), await harness.freePort()];
      const token = randomBytes(24).toString('hex');
      const proc = startTool(
        'configurable-http-proxy',
        chpBin,
        [
          '--ip',
          '127.0.0.1',
          '--port',
          String(port),
          '--api-ip',
          '127.0.0.1',
          '--api-port',
          String(apiPort),
          '--no-include-prefix',
          '--log-level',
          'warn',
        ],
        { CONFIGPROXY_AUTH_TOKEN: token },
      );
      teardown.procs.push({ stop: () => proc.stop('SIGTERM', 10_000) });
      const api = `http://127.0.0.1:${apiPort}/api/routes`;
      await waitForAnswer(proc, api, { headers: { authorization: `token ${token}` } });
      const added = await fetch(`${api}${ROUTE}`, {
        method: 'POST',
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ target: upstreamUrl }),
      });
      if (added.status !== 201)
        throw new Error(`configurable-http-proxy: adding the route answered ${added.status}`);
      const url = `http://127.0.0.1:${port}`;
      await waitForAnswer(proc, `${url}${ROUTE}${HTTP_PATH}`, { body: BODY });
      chp = { proc, url };
    }

    // The Node floor (`--node-floor`).
    let nodePipe;
    if (args['node-floor']) {
      const port = await harness.freePort();
      const proc = startTool('Node byte pipe', process.execPath, [
        '-e',
        NODE_PIPE_SCRIPT,
        String(port),
        String(upstream.port),
      ]);
      teardown.procs.push({ stop: () => proc.stop('SIGTERM', 10_000) });
      const url = `http://127.0.0.1:${port}`;
      await waitForAnswer(proc, `${url}${ROUTE}${HTTP_PATH}`, { body: BODY });
      nodePipe = { proc, url };
    }

    // Every proxy answers the upstream's body; the router only with the credential.
    for (const router of [routerSmall, routerLarge, ...comparedRouters]) {
      await waitForAnswer(router.proc, `${router.url}${ROUTE}${HTTP_PATH}`, {
        headers: authorization,
        body: BODY,
      });
      await waitForAnswer(router.proc, `${router.url}${ROUTE}${HTTP_PATH}`, { status: 401 });
    }

    const httpTargets = [
      { key: 'router', name: `router, ${SMALL_TABLE} routes`, url: routerSmall.url, headers: authorization },
      {
        key: 'router_large',
        name: `router, ${largeTable} routes`,
        url: routerLarge.url,
        headers: authorization,
      },
      ...(routerPooled
        ? [
            {
              key: 'router_pooled',
              name: `router, ${SMALL_TABLE} routes, HTTP read by node:http, pooled`,
              url: routerPooled.url,
              headers: authorization,
            },
          ]
        : []),
      ...(routerLibrary
        ? [
            {
              key: 'router_library',
              name: `router, ${SMALL_TABLE} routes, HTTP through http-proxy-3`,
              url: routerLibrary.url,
              headers: authorization,
            },
          ]
        : []),
      ...(nginx
        ? [{ key: 'nginx', name: `nginx (${nginxWorkers} worker)`, url: nginx.url, headers: {} }]
        : []),
      ...(chp ? [{ key: 'chp', name: 'configurable-http-proxy', url: chp.url, headers: {} }] : []),
      ...(nodePipe
        ? [
            {
              key: 'node_pipe',
              name: 'Node byte pipe (reference: parses nothing)',
              url: nodePipe.url,
              headers: {},
            },
          ]
        : []),
    ].map((t) => ({ ...t, url: `${t.url}${ROUTE}${HTTP_PATH}` }));
    httpTargets.push({
      key: 'upstream',
      name: 'upstream direct (floor)',
      url: `${upstreamUrl}${HTTP_PATH}`,
      headers: {},
    });
    const pidsOf = {
      router: [routerSmall.proc.child.pid],
      router_large: [routerLarge.proc.child.pid],
      router_pooled: routerPooled && [routerPooled.proc.child.pid],
      router_library: routerLibrary && [routerLibrary.proc.child.pid],
      nginx: nginx && withChildren(nginx.proc.child.pid),
      chp: chp && [chp.proc.child.pid],
      node_pipe: nodePipe && [nodePipe.proc.child.pid],
    };
    for (const t of httpTargets) t.pids = pidsOf[t.key];

    const loadBefore = os.loadavg()[0];

    // HTTP.
    const luaFile = path.join(dir, 'histogram.lua');
    writeFileSync(luaFile, WRK_SCRIPT);
    const agents = new Map();
    const runHttpSlice = async (target, ms, record) => {
      if (wrk) {
        const seconds = record ? sliceS : warmS;
        const headerArgs = Object.entries(target.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
        const { stdout } = await execFileAsync(
          wrk,
          [
            '-t1',
            `-c${concurrency}`,
            `-d${seconds}s`,
            '--timeout',
            `${REQUEST_TIMEOUT_S}s`,
            '-s',
            luaFile,
            ...headerArgs,
            target.url,
          ],
          { maxBuffer: 256 * 1024 * 1024, signal: interrupted },
        );
        return parseWrk(stdout);
      }
      if (!agents.has(target.key))
        agents.set(
          target.key,
          new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency }),
        );
      const send = nodeHttpSender(target.url, target.headers, agents.get(target.key));
      return harness.closedLoop(send, {
        concurrency,
        limit: { durationMs: record ? ms : warmS * 1000 },
        record,
      });
    };
    const httpResults = await alternate(httpTargets, {
      warmupMs: warmS * 1000,
      durationMs: measuredMs,
      rounds,
      runSlice: runHttpSlice,
      summarize: harness.summarizeLoad,
      interrupted,
    });
    for (const agent of agents.values()) agent.destroy();
    if (!httpResults) return;

    // WebSocket echo.
    const wsTargets = [
      { key: 'router', name: `router, ${SMALL_TABLE} routes`, url: routerSmall.url, headers: authorization },
      ...(nginx
        ? [{ key: 'nginx', name: `nginx (${nginxWorkers} worker)`, url: nginx.url, headers: {} }]
        : []),
      ...(chp ? [{ key: 'chp', name: 'configurable-http-proxy', url: chp.url, headers: {} }] : []),
    ].map((t) => ({ ...t, url: `${t.url.replace(/^http/, 'ws')}${ROUTE}${WS_PATH}`, pids: pidsOf[t.key] }));
    wsTargets.push({
      key: 'upstream',
      name: 'upstream direct (floor)',
      url: `${upstreamUrl.replace(/^http/, 'ws')}${WS_PATH}`,
    });
    for (const target of wsTargets) {
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
      target.clients = sockets.map(echoClient);
    }
    const wsResults = await alternate(wsTargets, {
      warmupMs: warmS * 1000,
      durationMs: measuredMs,
      rounds,
      runSlice: (target, ms, record) => wsSlice(target.clients, ms, record),
      summarize: harness.summarizeLoad,
      interrupted,
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
        node_floor: args['node-floor'],
      },
      skipped,
      httpResults,
      wsResults,
      rss: { idle_mb: rssIdleMb, after_load_mb: rssAfterMb, small_table_idle_mb: rssSmallIdleMb },
      hub: hub.counts,
      problems,
    });
    result.router_logs = Object.fromEntries(
      [...routerLines].map(([label, lines]) => [label, lines.summary()]),
    );
    if (args.json) console.log(JSON.stringify(result, null, 2));
    else printResult(result);

    if (problems.length > 0) {
      console.error(`${NAME}: ${problems.length} problem(s):`);
      for (const problem of problems) console.error(`  ${problem}`);
      for (const [label, lines] of routerLines) printLines(label, lines.summary());
      process.exitCode = 1;
    }
    if (profileDir) {
      await routerSmall.proc.stop('SIGTERM', 15_000);
      const profiles = readdirSync(profileDir).filter((file) => file.endsWith('.cpuprofile'));
      console.error(
        `${NAME}: CPU profile(s) of the ${SMALL_TABLE}-route router in ${profileDir}: ${profiles.join(', ')}`,
      );
    }
  } catch (error) {
    for (const [label, lines] of routerLines) printLines(label, lines.summary());
    throw error;
  } finally {
    await teardown.tearDown();
  }
}

function buildResult({
  loadBefore,
  loadAfter,
  settings,
  skipped,
  httpResults,
  wsResults,
  rss,
  hub,
  problems,
}) {
  const byKey = (results) => Object.fromEntries(results.map((r) => [r.key, r]));
  const http = byKey(httpResults);
  const ws = byKey(wsResults);
  const ratio = (a, b) => (a !== undefined && b !== undefined ? a / b : undefined);
  const check = (name, value, target, met) => ({
    name,
    value: value ?? null,
    target,
    met: value === undefined || !Number.isFinite(value) ? null : met(value),
  });
  const lookup = {
    rps_ratio: ratio(http.router_large?.rps, http.router?.rps),
    p50_ratio: ratio(http.router_large?.p50_ms, http.router?.p50_ms),
    p99_ratio: ratio(http.router_large?.p99_ms, http.router?.p99_ms),
    cpu_ratio: ratio(http.router_large?.cpu_ms_per_1000, http.router?.cpu_ms_per_1000),
  };
  // The default path against the earlier ones for plain HTTP (`--compare-forwarding`).
  const against = (other) =>
    other && {
      rps_ratio: ratio(http.router?.rps, other.rps),
      cpu_ratio: ratio(http.router?.cpu_ms_per_1000, other.cpu_ms_per_1000),
      p99_ratio: ratio(http.router?.p99_ms, other.p99_ms),
    };
  const forwarding =
    http.router_pooled || http.router_library
      ? { pooled: against(http.router_pooled), http_proxy_3: against(http.router_library) }
      : undefined;
  // The Node floor (`--node-floor`) against nginx, and the router against it.
  const nodeFloor = http.node_pipe && {
    rps_vs_nginx: ratio(http.node_pipe.rps, http.nginx?.rps),
    p99_vs_nginx: ratio(http.node_pipe.p99_ms, http.nginx?.p99_ms),
    cpu_vs_nginx: ratio(http.node_pipe.cpu_ms_per_1000, http.nginx?.cpu_ms_per_1000),
    router_rps_ratio: ratio(http.router?.rps, http.node_pipe.rps),
    router_p99_ratio: ratio(http.router?.p99_ms, http.node_pipe.p99_ms),
    router_cpu_ratio: ratio(http.router?.cpu_ms_per_1000, http.node_pipe.cpu_ms_per_1000),
  };
  const rssWorst = Math.max(rss.idle_mb ?? NaN, rss.after_load_mb ?? NaN);
  const band = TARGETS.lookupBand;
  const targets = [
    check(
      'HTTP p99: router ÷ nginx',
      ratio(http.router?.p99_ms, http.nginx?.p99_ms),
      `≤ ${TARGETS.p99VsNginx}×`,
      (v) => v <= TARGETS.p99VsNginx,
    ),
    check(
      'HTTP req/s: router ÷ nginx',
      ratio(http.router?.rps, http.nginx?.rps),
      `≥ ${TARGETS.rpsVsNginx}×`,
      (v) => v >= TARGETS.rpsVsNginx,
    ),
    check(
      'HTTP req/s: router ÷ configurable-http-proxy',
      ratio(http.router?.rps, http.chp?.rps),
      `≥ ${TARGETS.rpsVsChp}×`,
      (v) => v >= TARGETS.rpsVsChp,
    ),
    check(
      'WebSocket messages/s: router ÷ configurable-http-proxy',
      ratio(ws.router?.rps, ws.chp?.rps),
      `≥ ${TARGETS.wsVsChp}×`,
      (v) => v >= TARGETS.wsVsChp,
    ),
    check(
      `route look-up, req/s: ${settings.routes_large} ÷ ${settings.routes_small} routes`,
      lookup.rps_ratio,
      `≥ ${1 - band}×`,
      (v) => v >= 1 - band,
    ),
    check(
      `route look-up, p50: ${settings.routes_large} ÷ ${settings.routes_small} routes`,
      lookup.p50_ratio,
      `≤ ${1 + band}×`,
      (v) => v <= 1 + band,
    ),
    check(
      `router RSS with ${settings.routes_large} routes, idle (MB, worse of before/after load)`,
      Number.isFinite(rssWorst) ? rssWorst : undefined,
      `< ${TARGETS.rssMb}`,
      (v) => v < TARGETS.rssMb,
    ),
  ];
  return {
    date: new Date().toISOString(),
    // Other work on the machine shifts every figure; the alternating slices keep the ratios fair.
    machine: machine(loadBefore, loadAfter),
    settings,
    skipped,
    http: httpResults,
    websocket: wsResults,
    lookup,
    ...(forwarding ? { forwarding } : {}),
    ...(nodeFloor ? { node_floor: nodeFloor } : {}),
    rss,
    targets,
    hub_requests: hub,
    problems,
  };
}

function printResult(result) {
  const s = result.settings;
  const m = result.machine;
  console.log(
    `console router vs nginx vs configurable-http-proxy — ${m.cpus} CPUs (${m.model}), node ${m.node}, ` +
      `load average ${f(m.load_average_1m.before, 2)} → ${f(m.load_average_1m.after, 2)}`,
  );
  console.log(
    `HTTP client: ${s.client}; ${s.duration_s} s per target in ${s.rounds} alternating slices after ${s.warmup_s} s ` +
      `warm-up; WebSocket: ${s.ws_connections} connections, 64-byte messages; nginx: ${s.nginx_workers} worker process(es)` +
      `; router Node options: ${s.router_node_options || "none (Node's defaults)"}` +
      (result.skipped.length > 0 ? `; skipped: ${result.skipped.join(', ')}` : ''),
  );
  console.log('');
  const table = (title, unit, rows) => {
    console.log(`| ${title} | ${unit} | p50 ms | p99 ms | proxy CPU ms / 1 000 | errors |`);
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of rows)
      console.log(
        `| ${r.name} | ${f(r.rps, 0)} | ${f(r.p50_ms, 2)} | ${f(r.p99_ms, 2)} | ${r.cpu_ms_per_1000 === null ? '-' : f(r.cpu_ms_per_1000, 1)} | ${errorList(r.errors)} |`,
      );
    console.log('');
  };
  table(`HTTP GET, ${s.concurrency} in flight`, 'req/s', result.http);
  table('WebSocket echo', 'messages/s', result.websocket);
  const l = result.lookup;
  console.log(
    `route look-up (${s.routes_large} ÷ ${s.routes_small} routes): req/s ${f(l.rps_ratio, 3)}×, p50 ${f(l.p50_ratio, 3)}×, ` +
      `p99 ${f(l.p99_ratio, 3)}×, CPU per request ${f(l.cpu_ratio, 3)}×`,
  );
  for (const [way, w] of Object.entries(result.forwarding ?? {})) {
    if (!w) continue;
    console.log(
      `plain HTTP, direct ÷ ${way.replaceAll('_', '-')} (${s.routes_small} routes): req/s ${f(w.rps_ratio, 2)}×, ` +
        `CPU per request ${f(w.cpu_ratio, 2)}×, p99 ${f(w.p99_ratio, 2)}×`,
    );
  }
  const n = result.node_floor;
  if (n)
    console.log(
      `Node byte pipe (the floor): ÷ nginx req/s ${f(n.rps_vs_nginx, 2)}×, p99 ${f(n.p99_vs_nginx, 2)}×, ` +
        `CPU per request ${f(n.cpu_vs_nginx, 2)}×; router (${s.routes_small} routes) ÷ the pipe: req/s ` +
        `${f(n.router_rps_ratio, 2)}×, p99 ${f(n.router_p99_ratio, 2)}×, CPU per request ${f(n.router_cpu_ratio, 2)}×`,
    );
  console.log(
    `router RSS with ${s.routes_large} routes: ${f(result.rss.idle_mb, 1)} MB idle after loading, ` +
      `${f(result.rss.after_load_mb, 1)} MB idle after the measurements (${s.routes_small} routes: ${f(result.rss.small_table_idle_mb, 1)} MB)`,
  );
  console.log('');
  console.log('| target | value | wanted | verdict |');
  console.log('|---|---:|---:|---|');
  for (const t of result.targets)
    console.log(
      `| ${t.name} | ${t.value === null ? '-' : f(t.value, 2)} | ${t.target} | ${t.met === null ? 'not measured' : t.met ? 'met' : 'NOT met'} |`,
    );
}

if (isMainThread) await benchCli(NAME).run(runBench);
else upstreamThread();
