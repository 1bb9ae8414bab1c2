// The report of bench/service-memory.mjs: the verdict per process and the tables and lines it prints.
import { f, loadChange, printTable, verdict } from '../harness/report.mjs';

export const SERVICES = [
  'hub',
  'workflow-api',
  'workflow-worker',
  'relay',
  'console-router',
  'reference-agent',
];

const worstIdle = (rows) => Math.max(...rows.filter(Boolean).map((r) => r.rss_mb));

/** Per process: the worst idle RSS against the target, and the growth from the first round's idle to the last's. */
export function verdicts(result) {
  const { target_idle_mb: targetMb, growth_mb: growthMb } = result.settings;
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

/** The result as tables and lines. */
export function printReport(result) {
  const targetMb = result.settings.target_idle_mb;
  const m = result.machine;
  console.log(
    `\nService memory — ${result.settings.rounds} round(s) of ${result.settings.load_s} s load + ${result.settings.settle_s} s idle; ` +
      `node options: ${result.settings.node_options || '(none)'}; ` +
      `env: ${
        Object.entries(result.settings.launch_env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ') || '(none)'
      }; ${m.cpus}× ${m.model}, Node ${m.node}; ` +
      `load average ${loadChange(m.load_average_1m)}`,
  );
  console.log('\nRSS MB (V8 heap used MB) at each reading; peak = highest RSS sampled during the load');
  const head = [
    'fresh',
    ...result.rounds.flatMap((_, i) => [`r${i + 1} load`, `r${i + 1} peak`, `r${i + 1} idle`]),
  ];
  const signed = (n) => `${n >= 0 ? '+' : ''}${f(n)}`;
  const cell = (r) => (r ? `${f(r.rss_mb)} (${f(r.heap_used_mb)})` : '-');
  printTable(
    [
      'process',
      ...head,
      `idle < ${targetMb} MB`,
      `growth r1→r${result.rounds.length} idle (heap)`,
      'verdict',
    ],
    `l${'r'.repeat(head.length)}lll`,
    SERVICES.map((name) => {
      const v = result.verdicts[name];
      return [
        name,
        cell(result.fresh[name]),
        ...result.rounds.flatMap((r) => [cell(r.load[name]), f(r.peak[name]), cell(r.idle[name])]),
        v ? `${f(v.idle_max_mb)} ${verdict(v.idle_ok)}` : '-',
        v ? `${signed(v.growth_mb)} (${signed(v.heap_used_growth_mb)}) ${verdict(v.growth_ok)}` : '-',
        v ? verdict(v.idle_ok && v.growth_ok) : 'not measured',
      ];
    }),
  );
  console.log(
    '\nAt the last idle reading: RSS = anonymous + file-backed MB; V8 heap total, external, array buffers MB',
  );
  const lastIdle = result.rounds.at(-1)?.idle ?? result.fresh;
  printTable(
    ['process', 'RSS', 'anonymous', 'file', 'heap total', 'heap used', 'external', 'array buffers'],
    'lrrrrrrr',
    SERVICES.filter((name) => lastIdle[name]).map((name) => {
      const r = lastIdle[name];
      const mb = [
        r.rss_mb,
        r.anon_mb,
        r.file_mb,
        r.heap_total_mb,
        r.heap_used_mb,
        r.external_mb,
        r.array_buffers_mb,
      ];
      return [name, ...mb.map((n) => f(n))];
    }),
  );
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
