// The report of bench/workflow-delivery.mjs: its rounds combined, its result and the tables and lines it prints.
import { testing } from '../harness/cli.mjs';
import {
  combineRounds,
  failureLog,
  f,
  loadChange,
  machine,
  printTable,
  targetLine,
  whole,
} from '../harness/report.mjs';

const TARGET_PER_SECOND = 1000;
/** (c) against (b), the raw signed POST loop of the same run. */
const TARGET_RATIO_TO_RAW = 0.35;

const stats = (samples) => testing().latencyStats(samples);

function mergedFailures(logs) {
  const merged = failureLog();
  for (const log of logs) merged.addAll(log);
  return merged;
}

/** The raw POST loop's rounds as one: rates are items over the summed wall time, latencies of all samples. */
export function combineRaw(list) {
  const raw = combineRounds(list, { 'cpu.machine_busy_pct': 'mean', failures: mergedFailures });
  return { ...raw, per_second: raw.completed / raw.wall_s, latency: stats(raw.samples) };
}

/** The deliveries' rounds as one, likewise; per-round figures that are not counts are means or maxima. */
export function combineDeliveries(list) {
  const mean = 'mean';
  const d = combineRounds(list, {
    ...{ steady_per_second: mean, enqueue_s: mean, rows_settled_s: mean, 'cpu.machine_busy_pct': mean },
    ...{ 'attempt_latency_ms.p50': mean, 'attempt_latency_ms.p99': 'max', 'attempt_latency_ms.max': 'max' },
    subscription_active: (values) => values.every(Boolean),
    failures: mergedFailures,
  });
  d.per_second = d.received_unique / d.wall_s;
  d.latency = stats(d.samples);
  d.database.transactions_per_delivery = d.database.transactions / d.received_unique;
  return d;
}

/** A measurement without its raw samples (for the JSON report). */
function withoutSamples({ samples: _samples, ...rest }) {
  return rest;
}

/** The result (the JSON report): settings, the measurements, ratios, targets and every problem seen. */
export function buildResult(settings, load, { noop, raw, delivered, workerExited, perRound }) {
  const { count, rounds, concurrency, secure } = settings;
  const problems = [];
  for (const [label, log] of [
    ['(a) no-op', noop.failures],
    ['(b) raw POST', raw.failures],
    ['(c) deliveries', delivered.failures],
  ]) {
    for (const [failure, times] of Object.entries(log.counts()))
      problems.push(`${label}: ${failure}${times > 1 ? ` ×${times}` : ''}`);
  }
  if (workerExited) problems.push('the worker exited before the end');
  const nothingLost =
    delivered.lost === 0 && delivered.duplicates === 0 && delivered.failures.total === 0 && !workerExited;
  return {
    date: new Date().toISOString(),
    machine: machine(load.before, load.after),
    settings: {
      deliveries: count,
      rounds,
      concurrency,
      receiver: secure
        ? 'https (self-signed certificate), Webhook.verify (@svc/sdk) on every request'
        : 'http',
      worker_env:
        'production defaults; WORKFLOW_QUEUE_PREFIX unique, LOG_LEVEL=warn, WORKFLOW_DELIVERY_ALLOW_LOOPBACK=true, ' +
        `WORKFLOW_DELIVERY_CONCURRENCY=${concurrency}${secure ? ', WORKFLOW_DELIVERY_CA_FILE' : ''}`,
    },
    noop: withoutSamples(noop),
    raw_post: withoutSamples(raw),
    deliveries: withoutSamples(delivered),
    rounds: perRound.map((r) => ({
      round: r.round,
      load_average_1m: r.load_average_1m,
      raw_post: withoutSamples(r.raw),
      deliveries: withoutSamples(r.delivered),
      deliveries_to_raw_post: r.delivered.per_second / r.raw.per_second,
    })),
    ratios: {
      deliveries_to_noop: delivered.per_second / noop.per_second,
      deliveries_to_raw_post: delivered.per_second / raw.per_second,
    },
    target: {
      per_second: TARGET_PER_SECOND,
      ratio_to_raw_post: TARGET_RATIO_TO_RAW,
      sweeper_requeued: 0,
      rate_met: nothingLost && delivered.per_second >= TARGET_PER_SECOND,
      ratio_met: nothingLost && delivered.per_second / raw.per_second >= TARGET_RATIO_TO_RAW,
      sweeper_met: delivered.sweeper.requeued === 0,
      met:
        nothingLost &&
        delivered.per_second >= TARGET_PER_SECOND &&
        delivered.per_second / raw.per_second >= TARGET_RATIO_TO_RAW &&
        delivered.sweeper.requeued === 0,
    },
    problems,
  };
}

/** The result as tables and lines. */
export function printReport(result) {
  const { deliveries: count, rounds, concurrency } = result.settings;
  const secure = result.settings.receiver !== 'http';
  const { noop, raw_post: raw, deliveries: d } = result;
  console.log(
    `workflow delivery — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}; ` +
      `${whole(count)} items per measurement, (b) and (c) alternating in ${rounds} round(s), concurrency ` +
      `${concurrency}; ${secure ? 'HTTPS' : 'HTTP'} receiver ` +
      `in a thread of the bench process, every signature verified; worker at production defaults (own queue ` +
      `prefix, LOG_LEVEL=warn); load average ${loadChange(result.machine.load_average_1m)}`,
  );
  console.log('');
  const row = (name, done, m, ratio) => [
    name,
    whole(done),
    f(m.wall_s, 2),
    whole(m.per_second),
    ratio,
    ...[m.latency.p50_ms, m.latency.p90_ms, m.latency.p99_ms, m.latency.max_ms].map((ms) => f(ms)),
  ];
  printTable(
    ['measurement', 'done', 'wall s', 'per s', '(c) ÷ this', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    'lrrrrrrrr',
    [
      row(
        '(a) BullMQ no-op jobs: enqueue → completed',
        noop.completed,
        noop,
        `${f(result.ratios.deliveries_to_noop, 2)}×`,
      ),
      row(
        '(b) raw signed POST loop: request → 204',
        raw.completed,
        raw,
        `${f(result.ratios.deliveries_to_raw_post, 2)}×`,
      ),
      row('(c) signed deliveries: enqueue → received', d.received_unique, d, '1.00×'),
    ],
  );
  console.log('');
  printTable(
    [
      ...['round', 'load average 1 min', '(b) raw POSTs/s', '(c) deliveries/s', '(c) ÷ (b)'],
      '(c) re-enqueued by the sweeper',
    ],
    'rlrrrr',
    result.rounds.map((r) => [
      r.round,
      loadChange(r.load_average_1m),
      whole(r.raw_post.per_second),
      whole(r.deliveries.per_second),
      `${f(r.deliveries_to_raw_post, 2)}×`,
      whole(r.deliveries.sweeper.requeued),
    ]),
  );
  console.log('');
  const perThousand = (ms) => `${f((ms / d.received_unique) * 1000, 0)} ms`;
  const oneCpu = (ms) => `${f((ms / (d.wall_s * 1000)) * 100, 0)} %`;
  console.log(
    `(c) per round (mean): steady rate (10th to 90th percentile of arrivals) ${whole(d.steady_per_second)}/s; ` +
      `enqueue of ${whole(count)} jobs took ${f(d.enqueue_s, 2)} s (a: ${f(noop.enqueue_s, 2)} s); every row ` +
      `succeeded ${f(d.rows_settled_s, 2)} s after the first enqueue; attempt latency recorded by the worker ` +
      `p50 ${f(d.attempt_latency_ms.p50, 0)} ms, p99 (highest round) ${f(d.attempt_latency_ms.p99, 0)} ms`,
  );
  console.log(
    `(c) sweeper (the worker's counters): ${whole(d.sweeper.requeued)} deliveries re-enqueued; overdue ` +
      `deliveries it asked the queue about: ${whole(d.sweeper.checked_held)} still held (left alone), ` +
      `${whole(d.sweeper.checked_missing)} missing`,
  );
  console.log(
    `(c) checks: received ${whole(d.received_unique)}/${whole(d.seeded)} unique, ${d.duplicates} duplicate(s), ` +
      `${d.rejected} refused; rows ${JSON.stringify(d.rows)}; succeeded with one attempt ` +
      `${whole(d.one_attempt_each)}/${whole(d.seeded)}; attempt rows ${whole(d.attempt_rows)}; jobs left ` +
      `${Object.values(d.queue_left).reduce((a, b) => a + b, 0)}; connections the receiver accepted ` +
      `${whole(d.connections)} for ${whole(d.requests)} requests (b: ${whole(raw.connections)})`,
  );
  console.log(
    `(c) CPU per 1 000 deliveries (share of one CPU): worker ${perThousand(d.cpu.worker_ms)} ` +
      `(${oneCpu(d.cpu.worker_ms)}), Postgres backends ${perThousand(d.cpu.postgres_ms)} ` +
      `(${oneCpu(d.cpu.postgres_ms)}), Redis (whole server, shared) ${perThousand(d.cpu.redis_ms)} ` +
      `(${oneCpu(d.cpu.redis_ms)}), bench process (receiver + enqueue) ${perThousand(d.cpu.bench_ms)} ` +
      `(${oneCpu(d.cpu.bench_ms)}); machine busy ${f(d.cpu.machine_busy_pct, 0)} % of all CPUs ` +
      `(a: ${f(noop.cpu.machine_busy_pct, 0)} %, b: ${f(raw.cpu.machine_busy_pct, 0)} %)`,
  );
  console.log(
    `(c) database: ${f(d.database.transactions_per_delivery, 2)} transactions per delivery ` +
      `(${whole(d.database.transactions)} committed), ${whole(d.database.rows_inserted)} rows inserted, ` +
      `${whole(d.database.rows_updated)} updated, ${whole(d.database.rows_fetched)} fetched`,
  );
  console.log('');
  const { target } = result;
  console.log(
    targetLine(
      `signed deliveries ${whole(d.per_second)}/s with nothing lost or duplicated`,
      `≥ ${whole(TARGET_PER_SECOND)}/s`,
      target.rate_met,
    ),
  );
  console.log(
    targetLine(
      `deliveries ÷ raw signed POST loop: ${f(result.ratios.deliveries_to_raw_post, 2)}×`,
      `≥ ${TARGET_RATIO_TO_RAW}×`,
      target.ratio_met,
    ),
  );
  console.log(
    targetLine(`sweeper re-enqueues during the run: ${whole(d.sweeper.requeued)}`, '0', target.sweeper_met),
  );
}
