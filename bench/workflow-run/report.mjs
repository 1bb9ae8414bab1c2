// The report of bench/workflow-run.mjs: its result, where the time of a run went, and the table and lines it
// prints.
import { testing } from '../harness/cli.mjs';
import { f, loadChange, machine, printTable, targetLine } from '../harness/report.mjs';

const TARGET_P50_MS = 250;
const TARGET_P99_MS = 1000;

const stats = (values) => testing().latencyStats(values);
const median = (values) => testing().median(values);

/** The median of each segment of `timeline()` over these runs. */
export function timelineMedians(items) {
  return {
    created_to_assigned_ms: median(items.map((r) => r.created_to_assigned_ms)),
    assigned_to_claimed_ms: median(items.map((r) => r.assigned_to_claimed_ms)),
    claimed_to_artifact_ms: median(items.map((r) => r.claimed_to_artifact_ms)),
    artifact_to_seen_ms: median(items.map((r) => r.artifact_to_seen_ms)),
  };
}

/** The result (the JSON report): `settings`, the floor, both phases with their breakdowns, and the targets. */
export function buildResult(
  settings,
  { loadBefore, loadAfter, warmup, floor, sequential, burst, crashed, errorCount },
) {
  const burstCount = settings.burst;
  const { runs } = sequential;
  const phase1 = stats(runs.map((r) => r.ms));
  const floorStats = stats(sequential.floorMs);
  return {
    date: new Date().toISOString(),
    machine: machine(loadBefore, loadAfter),
    settings,
    floor: { ...floorStats, failures: floor.failures },
    phase1: {
      ...phase1,
      wall_s: sequential.wallMs / 1000,
      failures: sequential.failures,
      warmup_failures: warmup.failures,
    },
    phase1_breakdown_p50_ms: {
      invoke_ms: median(runs.map((r) => r.invoke_ms)),
      launch_ms: median(runs.map((r) => r.launch_ms)),
      ...timelineMedians(runs),
      polls: median(runs.map((r) => r.polls)),
    },
    phase2_breakdown_p50_ms: timelineMedians(burst.timelines),
    phase2: {
      invoked: burstCount,
      completed: burst.completed,
      wall_s: burst.wallMs / 1000,
      ...stats(burst.latencies),
      failures: burst.failures,
    },
    ratio_to_floor: {
      phase1_p50: phase1.p50_ms / floorStats.p50_ms,
      phase2_p50: median(burst.latencies) / floorStats.p50_ms,
    },
    targets: { phase1_p50_ms: TARGET_P50_MS, phase1_p99_ms: TARGET_P99_MS, burst_all_complete: burstCount },
    targets_met: {
      phase1_p50: phase1.p50_ms < TARGET_P50_MS,
      phase1_p99: phase1.p99_ms < TARGET_P99_MS,
      burst_all_complete: burst.completed === burstCount,
    },
    processes_exited: crashed.map((p) => p.name),
    errors: errorCount,
  };
}

/** The result as a table and lines. */
export function printReport(result) {
  const {
    agents: agentCount,
    runs: runCount,
    warmup: warmupCount,
    burst: burstCount,
    poll_ms: pollMs,
    burst_wait_s: waitS,
  } = result.settings;
  const reads = waitS > 0 ? `reads held up to ${waitS} s` : `polling every ${pollMs} ms`;
  const errs = (log) =>
    Object.entries(log.counts())
      .map(([k, v]) => `${k} ×${v}`)
      .join('; ') || '0';
  const { floor, phase1, phase2 } = result;
  console.log(
    `workflow run — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}, ` +
      `${agentCount} reference agent(s), one-stage template, engine at production defaults with its own queue ` +
      `prefix, LOG_LEVEL=warn for every process; ${runCount} runs after ${warmupCount} warm-up, burst of ` +
      `${burstCount}, ${reads}, one floor round trip before each run; load average ` +
      loadChange(result.machine.load_average_1m),
  );
  console.log('');
  const row = (name, s, ratio, failures) => [
    name,
    s.n,
    f(s.p50_ms, 2),
    f(s.p90_ms, 2),
    f(s.p99_ms, 2),
    f(s.max_ms, 2),
    ratio,
    errs(failures),
  ];
  printTable(
    ['measurement', 'completed', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'p50 / floor', 'failures'],
    'lrrrrrrl',
    [
      row('floor: BullMQ add → completed, no-op job', floor, '1.0×', floor.failures),
      row(
        'phase 1: invoke → completed, one at a time',
        phase1,
        `${f(result.ratio_to_floor.phase1_p50, 1)}×`,
        phase1.failures,
      ),
      row(
        `phase 2: invoke → completed, ${burstCount} at once`,
        phase2,
        `${f(result.ratio_to_floor.phase2_p50, 1)}×`,
        phase2.failures,
      ),
    ],
  );
  console.log('');
  const b = result.phase1_breakdown_p50_ms;
  console.log(
    `phase 1 medians: invoke ${f(b.invoke_ms, 1)} ms, launch ${f(b.launch_ms, 1)} ms; from the invocation's ` +
      `timestamps: created → stage assigned ${f(b.created_to_assigned_ms, 0)} ms, assigned → claimed ` +
      `${f(b.assigned_to_claimed_ms, 0)} ms, claimed → artifact ${f(b.claimed_to_artifact_ms, 0)} ms, ` +
      `artifact → seen ${f(b.artifact_to_seen_ms, 0)} ms; ${f(b.polls, 0)} polls per run`,
  );
  if (phase1.warmup_failures.total > 0) console.log(`warm-up failures: ${errs(phase1.warmup_failures)}`);
  const b2 = result.phase2_breakdown_p50_ms;
  console.log(
    `phase 2: ${phase2.completed}/${phase2.invoked} completed in ${f(phase2.wall_s, 2)} s ` +
      `(${f(phase2.completed / phase2.wall_s, 1)} runs/s); medians: created → stage assigned ` +
      `${f(b2.created_to_assigned_ms, 0)} ms, assigned → claimed ${f(b2.assigned_to_claimed_ms, 0)} ms, ` +
      `claimed → artifact ${f(b2.claimed_to_artifact_ms, 0)} ms, artifact → seen ${f(b2.artifact_to_seen_ms, 0)} ms`,
  );
  console.log('');
  const met = result.targets_met;
  console.log(
    targetLine(`phase 1 median ${f(phase1.p50_ms, 1)} ms`, `< ${TARGET_P50_MS} ms`, met.phase1_p50),
  );
  console.log(targetLine(`phase 1 p99 ${f(phase1.p99_ms, 1)} ms`, `< ${TARGET_P99_MS} ms`, met.phase1_p99));
  console.log(
    targetLine(`phase 2 ${phase2.completed}/${burstCount} completed`, 'all', met.burst_all_complete),
  );
}
