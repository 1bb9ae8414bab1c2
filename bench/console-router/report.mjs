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

const TARGETS = {
  p99VsNginx: 1.2,
  rpsVsNginx: 0.8,
  rpsVsChp: 1.0,
  wsVsChp: 1.0,
  lookupBand: 0.1,
  rssMb: 120,
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
    ['HTTP p99: router ÷ nginx', http, 'p99_ms', 'nginx', atMost(TARGETS.p99VsNginx)],
    ['HTTP req/s: router ÷ nginx', http, 'rps', 'nginx', atLeast(TARGETS.rpsVsNginx)],
    ['HTTP req/s: router ÷ configurable-http-proxy', http, 'rps', 'chp', atLeast(TARGETS.rpsVsChp)],
    ['WebSocket messages/s: router ÷ configurable-http-proxy', ws, 'rps', 'chp', atLeast(TARGETS.wsVsChp)],
  ];
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
  console.log('');
  printTargetTable(result.targets);
}
