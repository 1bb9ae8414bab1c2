// The scale phases of bench/console-router.mjs (decision 91): idle consoles held (`--consoles N`), live
// terminal streams (`--streams M` at `--stream-rate` bytes/s each) and route propagation (`--propagation K`
// agent starts), against one router with a small table, an agent process (scale-agent.mjs) and client
// processes (scale-client.mjs, at most `PER_CLIENT` sockets each).
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processCpuMs } from '../harness/proc.mjs';
import { ROUTE, WORKSPACE, routeTable } from './stub-hub.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The most sockets one client process opens. */
const PER_CLIENT = 2_500;

export const vmRssKb = (pid) =>
  Number(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'))
      ?.replace(/\D+/g, ''),
  );
export const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length;

export function percentile(sorted, p) {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A forked helper process, stopped at tear-down; `ask(message, answerType)` resolves with its answer. */
function helper(teardown, file, args = []) {
  const child = fork(path.join(here, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  teardown.push(() => child.kill('SIGKILL'));
  const waiting = new Map();
  child.on('message', (message) => {
    const resolve = waiting.get(message.type);
    if (resolve) {
      waiting.delete(message.type);
      resolve(message);
    }
  });
  const next = (type) => new Promise((resolve) => waiting.set(type, resolve));
  return {
    child,
    next,
    ask(message, answer) {
      const reply = next(answer);
      child.send(message);
      return reply;
    },
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the scale phases; `startRouter(hostId, env)` starts the router over the stub hub's table of `hostId`
 * (already in `tables`), `authorization` is the member's header.
 */
export async function runScale({ teardown, tables, startRouter, authorization, settings }) {
  const { streams, propagation, holdMs, pingMs, streamRate, frameBytes, streamMs } = settings;
  let consoles = settings.consoles;
  const result = { settings: { ...settings } };
  // The agent: its own process.
  const agentProc = new Promise((resolve) => {
    const agent = helper(teardown, 'scale-agent.mjs', [pingMs, streamRate, frameBytes].map(String));
    agent.child.once('message', (message) => resolve({ ...agent, port: message.port }));
  });
  const agent = await agentProc;
  const hostId = 'rti_benchscale';
  tables.set(hostId, routeTable(hostId, 10, agent.port));
  const capacity = String(consoles + streams + 1_000);
  const router = await startRouter(hostId, {
    CONSOLE_ROUTER_WS_MAX_CONNECTIONS: capacity,
    CONSOLE_ROUTER_WS_MAX_PER_ROUTE: capacity,
    CONSOLE_ROUTER_WS_MAX_PER_CALLER: capacity,
  });
  const pid = router.proc.child.pid;
  // Two descriptors per socket: where the router's open-file limit cannot carry them all (a hard limit the
  // bench could not raise), fewer idle consoles are opened and the run says so.
  const fitting = Math.max(0, Math.floor((router.fdLimit - 1_024) / 2) - streams);
  if (consoles > fitting) {
    result.capped = `the router's open-file limit (${router.fdLimit}) carries ${fitting} idle consoles beside ${streams} streams`;
    consoles = fitting;
  }
  const wsUrl = `${router.url.replace('http', 'ws')}${ROUTE}`;
  const headers = { ...authorization, origin: 'http://127.0.0.1' };
  const clientCount = Math.max(1, Math.ceil(Math.max(consoles, streams) / PER_CLIENT));
  const clients = await Promise.all(
    Array.from({ length: clientCount }, async () => {
      const client = helper(teardown, 'scale-client.mjs');
      await client.next('ready');
      return client;
    }),
  );
  result.settings.client_processes = clientCount;
  const status = async () => (await fetch(`${router.url}/status`)).json();

  // Idle consoles.
  if (consoles > 0) {
    // A few consoles first, so the code paths are loaded before the baseline.
    await clients[0].ask({ type: 'open', url: `${wsUrl}/terminal`, headers, count: 10, batch: 10 }, 'opened');
    await sleep(1_000);
    const before = { rss_kb: vmRssKb(pid), fds: fdCount(pid) };
    const started = performance.now();
    const shares = clients.map(
      (_, i) => Math.floor(consoles / clientCount) + (i < consoles % clientCount ? 1 : 0),
    );
    const opened = await Promise.all(
      clients.map((client, i) =>
        client.ask(
          { type: 'open', url: `${wsUrl}/terminal`, headers, count: shares[i], batch: 100 },
          'opened',
        ),
      ),
    );
    const openMs = performance.now() - started;
    const errors = {};
    for (const o of opened) for (const [k, v] of Object.entries(o.errors)) errors[k] = (errors[k] ?? 0) + v;
    await sleep(2_000);
    const held = { rss_kb: vmRssKb(pid), fds: fdCount(pid) };
    // Hold them: the agent pings every console every `pingMs`; RSS sampled every second.
    const samples = [];
    const holdStart = performance.now();
    while (performance.now() - holdStart < holdMs) {
      await sleep(1_000);
      samples.push(vmRssKb(pid) / 1024);
    }
    const counts = await Promise.all(clients.map((c) => c.ask({ type: 'count' }, 'count')));
    const stillOpen = counts.reduce((n, c) => n + c.open, 0) - 10;
    const s = await status();
    result.consoles = {
      requested: consoles,
      held: stillOpen,
      status_websockets: s.upstream_connections.websockets,
      open_errors: errors,
      open_s: openMs / 1000,
      rss_before_mb: before.rss_kb / 1024,
      rss_mb: held.rss_kb / 1024,
      rss_after_hold_mb: samples.at(-1) ?? held.rss_kb / 1024,
      rss_max_during_hold_mb: Math.max(held.rss_kb / 1024, ...samples),
      fds_after_hold: fdCount(pid),
      rss_per_console_kb: (held.rss_kb - before.rss_kb) / consoles,
      fds_before: before.fds,
      fds: held.fds,
      hold_s: holdMs / 1000,
      ping_ms: pingMs,
    };
  }

  // Live streams (with the idle consoles still held).
  if (streams > 0) {
    const shares = clients.map(
      (_, i) => Math.floor(streams / clientCount) + (i < streams % clientCount ? 1 : 0),
    );
    const cpuBefore = processCpuMs(pid);
    const runs = await Promise.all(
      clients.map((client, i) =>
        client.ask(
          {
            type: 'stream',
            url: `${wsUrl}/stream`,
            headers,
            count: shares[i],
            batch: 100,
            warmupMs: 2_000,
            ms: streamMs,
          },
          'streamed',
        ),
      ),
    );
    const cpuMs = processCpuMs(pid) - cpuBefore;
    const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const bytes = runs.reduce((n, r) => n + r.bytes, 0);
    const ms = Math.max(...runs.map((r) => r.ms));
    const errors = {};
    for (const r of runs) for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + v;
    result.streams = {
      requested: streams,
      open: runs.reduce((n, r) => n + r.open, 0),
      rate_bytes_per_s: streamRate,
      frame_bytes: frameBytes,
      seconds: ms / 1000,
      frames: latencies.length,
      received_bytes_per_s_each: bytes / (ms / 1000) / Math.max(1, streams),
      p50_ms: percentile(latencies, 50),
      p99_ms: percentile(latencies, 99),
      max_ms: latencies.at(-1),
      router_cpu_percent: cpuMs === undefined ? undefined : (cpuMs / (streamMs + 2_000)) * 100,
      open_errors: errors,
    };
  }

  // Route propagation: an agent "started" (its route added to the hub's table, online), then what the runtime
  // does for `svc start` (POST /routes/refresh to every router of the host), then requests until the first 200
  // through each router (`--routers N`: N routers over the same table, as `svc runtime up --routers N` runs them).
  if (propagation > 0) {
    const replicas = [router];
    for (let i = 1; i < settings.routers; i += 1) replicas.push(await startRouter(hostId, {}));
    const perReplica = replicas.map(() => []);
    const toEvery = [];
    const extra = [];
    const firstOk = async (base, agentId, started) => {
      for (;;) {
        const res = await fetch(`${base}/${WORKSPACE.slug}/agents/${agentId}/global/health`, {
          headers: authorization,
        });
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - started;
        if (performance.now() - started > 10_000)
          throw new Error(`${agentId}: no 200 from ${base} within 10 s (${res.status})`);
        await sleep(5);
      }
    };
    for (let i = 0; i < propagation; i += 1) {
      const agentId = `agt_started${String(i).padStart(3, '0')}`;
      extra.push(agentId);
      const started = performance.now();
      tables.set(hostId, routeTable(hostId, 10, agent.port, extra));
      await Promise.all(replicas.map((r) => fetch(`${r.url}/routes/refresh`, { method: 'POST' })));
      const times = await Promise.all(replicas.map((r) => firstOk(r.url, agentId, started)));
      times.forEach((ms, r) => perReplica[r].push(ms));
      toEvery.push(Math.max(...times));
    }
    const summary = (values) => {
      const sorted = [...values].sort((a, b) => a - b);
      return { p50_ms: percentile(sorted, 50), p99_ms: percentile(sorted, 99), max_ms: sorted.at(-1) };
    };
    result.propagation = {
      starts: propagation,
      routers: replicas.length,
      // Until the route answered on every router.
      ...summary(toEvery),
      replicas: perReplica.map((values, i) => ({ router: i + 1, ...summary(values) })),
      from:
        replicas.length > 1
          ? `route added at the hub, then POST /routes/refresh to each of ${replicas.length} routers (as the runtime does for svc start), to the first 200 through each router; p50/p99 above: until every router answered`
          : 'route added at the hub, then POST /routes/refresh (as svc start), to the first 200 through the router',
    };
  }
  result.router_status = await status();
  result.router_status.routes = result.router_status.routes.length;
  await Promise.all(clients.map((c) => c.ask({ type: 'close' }, 'closed')));
  return result;
}
