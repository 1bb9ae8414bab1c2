// Scale-out of bench/workflow-run.mjs: the burst's throughput of one configuration (hubs, Workflow APIs and
// workers), the machine's CPU left idle meanwhile, and one configuration against another. Not a bench itself.
import os from 'node:os';
import { f, printTable, verdict } from '../harness/report.mjs';

/**
 * What HAProxy said of its servers during the burst (`balancerOutput`, its log from the burst's start): how
 * many times a checked server was taken out, and how many of those left no checked server, so that it sent to
 * the unchecked backups (decision 110).
 */
export function balancerEvents(balancerOutput) {
  const down = (balancerOutput ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^Server \S+ is DOWN\b/.test(line));
  return {
    servers_taken_out: down.length,
    fell_back_to_backups: down.filter((l) => /Running on backup/.test(l)).length,
  };
}

/**
 * One configuration's burst: runs/s (completed over the wall time to the last completion), the machine's CPU
 * left idle during it (all CPUs, /proc/stat) and the stack's CPU per run, and `idle_runs_per_s`: the runs per
 * second the idle CPU would have bought at that cost per run; with `balancerOutput`, what HAProxy did.
 */
export function scaleoutEntry(config, burst, cost, load, balancerOutput) {
  const runsPerS = burst.wallMs > 0 ? (burst.completed * 1000) / burst.wallMs : null;
  const idlePct = cost?.machine_idle_pct ?? null;
  const cpuPerRun = cost?.cpu_ms?.total ?? null;
  const cpus = os.cpus().length;
  return {
    ...config,
    invoked: burst.invoked,
    completed: burst.completed,
    failures: burst.failures.total,
    wall_s: burst.wallMs / 1000,
    runs_per_s: runsPerS,
    idle_pct: idlePct,
    cpu_ms_per_run: cpuPerRun,
    idle_runs_per_s: idlePct !== null && cpuPerRun ? ((idlePct / 100) * cpus * 1000) / cpuPerRun : null,
    redis_commands_per_run: cost?.redis_commands ?? null,
    postgres_connections: cost?.connections ?? null,
    load_average_1m: load,
    balancer: balancerOutput === undefined ? null : balancerEvents(balancerOutput),
  };
}

/**
 * The scale-out targets of the last configuration against the first: never slower, and where the first left
 * CPU idle, at least half of it turned into throughput (runs/s ≥ first + half its `idle_runs_per_s`).
 */
export function scaleoutTargets(entries) {
  if (entries.length < 2) return null;
  const [one, many] = [entries[0], entries[entries.length - 1]];
  if (one.runs_per_s === null || many.runs_per_s === null) return null;
  const wanted = one.runs_per_s + (one.idle_runs_per_s ?? 0) / 2;
  return {
    speed_up: many.runs_per_s / one.runs_per_s,
    never_slower: many.runs_per_s >= one.runs_per_s,
    half_idle_wanted_runs_per_s: wanted,
    half_idle_into_throughput: many.runs_per_s >= wanted,
  };
}

const label = (e) => `${e.apis} API${e.apis > 1 ? 's' : ''}, ${e.workers} worker${e.workers > 1 ? 's' : ''}`;
export const configLabel = (e) => `${label(e)}${e.hubs > 1 ? `, ${e.hubs} hubs` : ''}`;

/** The configurations side by side, and the targets when there are two or more. */
export function printScaleout(entries, targets) {
  console.log(
    `\nScale-out: the burst per configuration (machine idle = all ${os.cpus().length} CPUs, /proc/stat)`,
  );
  printTable(
    [
      'configuration',
      'completed',
      'wall s',
      'runs/s',
      'machine idle %',
      'CPU ms/run',
      'runs/s the idle CPU would buy',
      'Redis cmds/run',
      'PG conns hub/wf',
      'HAProxy: taken out / on backups',
      'load 1m',
    ],
    'lrrrrrrrrrl',
    entries.map((e) => [
      configLabel(e),
      `${e.completed}/${e.invoked}`,
      f(e.wall_s, 2),
      f(e.runs_per_s, 2),
      f(e.idle_pct, 1),
      f(e.cpu_ms_per_run, 1),
      f(e.idle_runs_per_s, 2),
      f(e.redis_commands_per_run, 0),
      e.postgres_connections ? `${e.postgres_connections.hub}/${e.postgres_connections.workflow}` : '-',
      e.balancer ? `${e.balancer.servers_taken_out} / ${e.balancer.fell_back_to_backups}` : '-',
      `${f(e.load_average_1m.before, 2)} → ${f(e.load_average_1m.after, 2)}`,
    ]),
  );
  if (!targets) return;
  console.log(
    `  ${configLabel(entries[entries.length - 1])} against ${configLabel(entries[0])}: ×${f(targets.speed_up, 2)}; ` +
      `never slower: ${verdict(targets.never_slower)}; half the idle CPU into throughput ` +
      `(≥ ${f(targets.half_idle_wanted_runs_per_s, 2)} runs/s): ${verdict(targets.half_idle_into_throughput)}`,
  );
}
