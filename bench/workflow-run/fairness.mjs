// --fairness of bench/workflow-run.mjs: project B's runs one at a time alone, then while project A bursts.
// Not a bench itself.
import os from 'node:os';
import { failureLog, printResult } from '../harness/report.mjs';
import { timelineMedians } from './report.mjs';

/** The p-th percentile (nearest rank) of `values`, in ms; null when empty. */
function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The median of `values`, in ms; null when empty. */
const median = (values) => percentile(values, 50);

/** Where a run's time went (medians): invoke and launch round trips, then the run's timeline. */
function breakdown(runs) {
  return {
    invoke_ms: median(runs.map((r) => r.invoke_ms)),
    launch_ms: median(runs.map((r) => r.launch_ms)),
    ...timelineMedians(runs),
  };
}

/** The slowest `n` runs' own timelines, slowest first: where a p99 run spent its time. */
function slowest(runs, n = 3) {
  return [...runs]
    .sort((x, y) => y.ms - x.ms)
    .slice(0, n)
    .map((r) => ({
      total_ms: r.ms,
      invoke_ms: r.invoke_ms,
      launch_ms: r.launch_ms,
      created_to_assigned_ms: r.created_to_assigned_ms,
      assigned_to_claimed_ms: r.assigned_to_claimed_ms,
      claimed_to_artifact_ms: r.claimed_to_artifact_ms,
      artifact_to_seen_ms: r.artifact_to_seen_ms,
    }));
}

/** `count` runs of `client` one at a time (or until `until()` says stop); latencies, runs and failures. */
async function oneAtATime(client, count, interrupted, until = () => false) {
  const failures = failureLog({ examples: 5 });
  const ms = [];
  const runs = [];
  for (let i = 0; i < count && !until() && !interrupted.aborted; i += 1) {
    try {
      const run = await client.oneRun();
      runs.push(run);
      ms.push(run.ms);
    } catch (error) {
      failures.add(error.label ?? String(error?.message ?? error), error.detail);
    }
  }
  return { ms, runs, failures };
}

/**
 * --fairness: project B's one-at-a-time runs alone, then while project A bursts `--burst` runs (B keeps
 * running one at a time until A's burst is done or B ran `--runs`). Prints B's p99 alone and during the burst
 * and their ratio (target ≤ 2). `a` and `b` are the projects' run clients; `burst(client)` runs A's burst.
 */
export async function fairness({
  a,
  b,
  burst: runBurst,
  runCount,
  warmupCount,
  burstCount,
  json,
  interrupted,
}) {
  const loadBefore = os.loadavg()[0];
  const warm = await oneAtATime(b, warmupCount, interrupted);
  const alone = await oneAtATime(b, runCount, interrupted);
  let burstDone = false;
  const burstPromise = runBurst(a).finally(() => {
    burstDone = true;
  });
  const during = await oneAtATime(b, runCount, interrupted, () => burstDone);
  const burst = await burstPromise;
  const loadAfter = os.loadavg()[0];
  const p99Alone = percentile(alone.ms, 99);
  const p99During = percentile(during.ms, 99);
  const result = {
    fairness: {
      b_runs_alone: alone.ms.length,
      b_p50_alone_ms: percentile(alone.ms, 50),
      b_p99_alone_ms: p99Alone,
      b_runs_during_burst: during.ms.length,
      b_p50_during_burst_ms: percentile(during.ms, 50),
      b_p99_during_burst_ms: p99During,
      ratio_p99: p99Alone && p99During !== null ? p99During / p99Alone : null,
      b_breakdown_p50_alone_ms: breakdown(alone.runs),
      b_breakdown_p50_during_burst_ms: breakdown(during.runs),
      b_slowest_during_burst_ms: slowest(during.runs),
      a_burst: burstCount,
      a_completed: burst.completed,
      a_runs_per_s: burst.wallMs > 0 ? (burst.completed * 1000) / burst.wallMs : null,
      load_before: loadBefore,
      load_after: loadAfter,
      failures: warm.failures.total + alone.failures.total + during.failures.total + burst.failures.total,
    },
  };
  printResult(result, json, (r) => {
    const f = r.fairness;
    const ms = (v) => (v === null ? 'n/a' : `${v.toFixed(0)} ms`);
    console.log(`fairness: project A bursts ${f.a_burst} runs while project B runs one at a time`);
    console.log(
      `  B alone:        ${f.b_runs_alone} runs, p50 ${ms(f.b_p50_alone_ms)}, p99 ${ms(f.b_p99_alone_ms)}`,
    );
    console.log(
      `  B during burst: ${f.b_runs_during_burst} runs, p50 ${ms(f.b_p50_during_burst_ms)}, p99 ${ms(f.b_p99_during_burst_ms)}`,
    );
    const parts = (b) =>
      Object.entries(b)
        .map(([k, v]) => `${k.replace(/_ms$/, '')} ${v === null || Number.isNaN(v) ? 'n/a' : v.toFixed(0)}`)
        .join(', ');
    console.log(`  B p50 breakdown alone (ms):  ${parts(f.b_breakdown_p50_alone_ms)}`);
    console.log(`  B p50 breakdown during (ms): ${parts(f.b_breakdown_p50_during_burst_ms)}`);
    for (const run of f.b_slowest_during_burst_ms)
      console.log(`  B slowest during (ms):       ${parts(run)}`);
    console.log(
      `  ratio p99 during/alone: ${f.ratio_p99 === null ? 'n/a' : f.ratio_p99.toFixed(2)} (target ≤ 2)`,
    );
    console.log(
      `  A: ${f.a_completed}/${f.a_burst} completed, ${f.a_runs_per_s?.toFixed(1) ?? 'n/a'} runs/s; ` +
        `load average ${f.load_before.toFixed(2)} → ${f.load_after.toFixed(2)}; failures ${f.failures}`,
    );
  });
  const logs = [warm.failures, alone.failures, during.failures, burst.failures];
  for (const log of logs) for (const example of log.examples) console.error(`  ${example}`);
  if (result.fairness.failures > 0) process.exitCode = 1;
}
