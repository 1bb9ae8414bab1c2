// The report of bench/console-router.mjs: the ratios between the proxies, its targets checked, and the tables
// and lines it prints.
import {
  atLeast,
  atMost,
  below,
  errorList,
  f,
  loadChange,
  machine,
  printTable,
  printTargetTable,
  targetCheck,
} from '../harness/report.mjs';

/**
 * The console router issue's targets (decision 91): against configurable-http-proxy and the Node byte pipe;
 * nginx is reported beside them, not a target. The scale targets are checked by {@link buildScaleResult}.
 */
const TARGETS = {
  rpsVsChp: 3.0,
  p99VsChp: 0.5,
  cpuVsPipe: 2.0,
  wsVsChp: 1.0,
  lookupBand: 0.1,
  rssMb: 120,
  idleConsolesMb: 300,
  streamP99Ms: 50,
  propagationP99Ms: 1_000,
};

/** The result (the JSON report): settings, the measurements, the ratios and the targets checked. */
export function buildResult({
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
  const lookup = {
    rps_ratio: ratio(http.router_large?.rps, http.router?.rps),
    p50_ratio: ratio(http.router_large?.p50_ms, http.router?.p50_ms),
    p99_ratio: ratio(http.router_large?.p99_ms, http.router?.p99_ms),
    cpu_ratio: ratio(http.router_large?.cpu_ms_per_1000, http.router?.cpu_ms_per_1000),
  };
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
  const tables = `${settings.routes_large} ÷ ${settings.routes_small}`;
  // The router (10 routes) against another proxy, by one figure of HTTP or WebSocket.
  const routerVs = [
    ['HTTP req/s: router ÷ configurable-http-proxy', http, 'rps', 'chp', atLeast(TARGETS.rpsVsChp)],
    ['HTTP p99: router ÷ configurable-http-proxy', http, 'p99_ms', 'chp', atMost(TARGETS.p99VsChp)],
    [
      'router CPU per request ÷ the Node byte pipe (--node-floor)',
      http,
      'cpu_ms_per_1000',
      'node_pipe',
      atMost(TARGETS.cpuVsPipe),
    ],
    ['WebSocket messages/s: router ÷ configurable-http-proxy', ws, 'rps', 'chp', atLeast(TARGETS.wsVsChp)],
  ];
  // nginx beside them: the physical anchor, not a target.
  const nginx = {
    rps_ratio: ratio(http.router?.rps, http.nginx?.rps),
    p99_ratio: ratio(http.router?.p99_ms, http.nginx?.p99_ms),
    ws_ratio: ratio(ws.router?.rps, ws.nginx?.rps),
  };
  const targets = [
    ...routerVs.map(([name, results, figure, other, target]) =>
      targetCheck(name, ratio(results.router?.[figure], results[other]?.[figure]), target),
    ),
    targetCheck(`route look-up, req/s: ${tables} routes`, lookup.rps_ratio, atLeast(1 - band)),
    targetCheck(`route look-up, p50: ${tables} routes`, lookup.p50_ratio, atMost(1 + band)),
    targetCheck(
      `router RSS with ${settings.routes_large} routes, idle (MB, worse of before/after load)`,
      Number.isFinite(rssWorst) ? rssWorst : undefined,
      below(TARGETS.rssMb),
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
    nginx_beside: nginx,
    ...(nodeFloor ? { node_floor: nodeFloor } : {}),
    rss,
    targets,
    hub_requests: hub,
    problems,
  };
}

/** The result as tables and lines. */
export function printText(result) {
  const s = result.settings;
  const m = result.machine;
  console.log(
    `console router vs nginx vs configurable-http-proxy — ${m.cpus} CPUs (${m.model}), node ${m.node}, ` +
      `load average ${loadChange(m.load_average_1m)}`,
  );
  console.log(
    `HTTP client: ${s.client}; ${s.duration_s} s per target in ${s.rounds} alternating slices after ${s.warmup_s} s ` +
      `warm-up; WebSocket: ${s.ws_connections} connections, 64-byte messages; nginx: ${s.nginx_workers} worker process(es)` +
      `; router Node options: ${s.router_node_options || "none (Node's defaults)"}` +
      (result.skipped.length > 0 ? `; skipped: ${result.skipped.join(', ')}` : ''),
  );
  console.log('');
  const table = (title, unit, rows) => {
    printTable(
      [title, unit, 'p50 ms', 'p99 ms', 'proxy CPU ms / 1 000', 'errors'],
      'lrrrrr',
      rows.map((r) => {
        const cpu = r.cpu_ms_per_1000 === null ? '-' : f(r.cpu_ms_per_1000, 1);
        return [r.name, f(r.rps, 0), f(r.p50_ms, 2), f(r.p99_ms, 2), cpu, errorList(r.errors)];
      }),
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
  const x = result.nginx_beside;
  console.log(
    `nginx beside (not a target): router ÷ nginx req/s ${f(x.rps_ratio, 2)}×, p99 ${f(x.p99_ratio, 2)}×, ` +
      `WebSocket messages/s ${f(x.ws_ratio, 2)}×`,
  );
  console.log('');
  printTargetTable(result.targets);
}

/** The scale run's result (`--consoles`, `--streams`, `--propagation`): its figures and the targets checked. */
export function buildScaleResult({ loadBefore, loadAfter, result, fdLimit }) {
  const { consoles, streams, propagation } = result;
  const problems = result.capped ? [`idle consoles capped: ${result.capped}`] : [];
  if (consoles && consoles.held < consoles.requested)
    problems.push(
      `${consoles.requested - consoles.held} idle consoles failed to open or closed during the hold` +
        (Object.keys(consoles.open_errors).length > 0 ? ` (${errorList(consoles.open_errors)})` : ''),
    );
  if (streams && streams.open < streams.requested)
    problems.push(
      `${streams.requested - streams.open} streams failed to open or closed during the run` +
        (Object.keys(streams.open_errors).length > 0 ? ` (${errorList(streams.open_errors)})` : ''),
    );
  const targets = [];
  if (consoles) {
    const worst = Math.max(consoles.rss_mb, consoles.rss_max_during_hold_mb);
    const scaled = consoles.held < 10_000;
    targets.push(
      targetCheck(
        `router RSS holding ${consoles.held} idle consoles (MB, worst through the hold)`,
        scaled
          ? (worst - consoles.rss_before_mb) * (10_000 / Math.max(1, consoles.held)) + consoles.rss_before_mb
          : worst,
        below(TARGETS.idleConsolesMb),
      ),
    );
    if (scaled) targets.at(-1).name += ', growth per console scaled to 10 000';
  }
  if (streams)
    targets.push(
      targetCheck(
        `frame latency p99, ${streams.requested} streams at ${Math.round(streams.rate_bytes_per_s / 1024)} KB/s (ms)`,
        streams.p99_ms,
        below(TARGETS.streamP99Ms),
      ),
    );
  if (propagation)
    targets.push(
      targetCheck(
        propagation.routers > 1
          ? `route propagation p99, start to first 200 on every one of ${propagation.routers} routers (ms)`
          : 'route propagation p99, start to first 200 (ms)',
        propagation.p99_ms,
        below(TARGETS.propagationP99Ms),
      ),
    );
  return {
    date: new Date().toISOString(),
    machine: machine(loadBefore, loadAfter),
    settings: result.settings,
    router_open_file_limit: fdLimit,
    ...(consoles ? { consoles } : {}),
    ...(streams ? { streams } : {}),
    ...(propagation ? { propagation } : {}),
    router_status: result.router_status,
    targets,
    problems,
  };
}

/** The scale run as lines. */
export function printScaleText(result) {
  const m = result.machine;
  console.log(
    `console router at scale — ${m.cpus} CPUs (${m.model}), node ${m.node}, load average ${loadChange(m.load_average_1m)}; ` +
      `${result.settings.client_processes} client process(es), router open-file limit ${result.router_open_file_limit ?? '?'}`,
  );
  const c = result.consoles;
  if (c)
    console.log(
      `idle consoles: ${c.held} of ${c.requested} held (/status: ${c.status_websockets}), opened in ${f(c.open_s, 1)} s; ` +
        `router RSS ${f(c.rss_before_mb, 1)} → ${f(c.rss_mb, 1)} MB (${f(c.rss_per_console_kb, 1)} KB per console), ` +
        `${f(c.rss_after_hold_mb, 1)} MB after ${c.hold_s} s of pings every ${c.ping_ms} ms (max ${f(c.rss_max_during_hold_mb, 1)}); ` +
        `fds ${c.fds_before} → ${c.fds} → ${c.fds_after_hold} after the hold`,
    );
  const s = result.streams;
  if (s)
    console.log(
      `streams: ${s.open} of ${s.requested} at ${f(s.rate_bytes_per_s / 1024, 0)} KB/s (${s.frame_bytes}-byte frames) for ` +
        `${f(s.seconds, 1)} s: received ${f(s.received_bytes_per_s_each / 1024, 1)} KB/s each; frame latency p50 ` +
        `${f(s.p50_ms, 2)} ms, p99 ${f(s.p99_ms, 2)} ms, max ${f(s.max_ms, 1)} ms over ${s.frames} frames; router CPU ${f(s.router_cpu_percent, 0)} %`,
    );
  const p = result.propagation;
  if (p)
    console.log(
      `route propagation over ${p.starts} starts: p50 ${f(p.p50_ms, 1)} ms, p99 ${f(p.p99_ms, 1)} ms, max ${f(p.max_ms, 1)} ms (${p.from})`,
    );
  if (p && p.replicas.length > 1)
    for (const r of p.replicas)
      console.log(
        `  router ${r.router}: p50 ${f(r.p50_ms, 1)} ms, p99 ${f(r.p99_ms, 1)} ms, max ${f(r.max_ms, 1)} ms`,
      );
  console.log('');
  printTargetTable(result.targets);
  if (result.problems.length > 0) console.log(`problems: ${result.problems.join('; ')}`);
}
