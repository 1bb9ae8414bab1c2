import { Client } from 'pg';
import { startFleet } from './fleet';
import type { Fleet, FleetRun } from './fleet';

export interface FleetSoakOptions {
  /** Hosts in the fleet (default 3: one is killed, one drained, one has its key rotated). */
  hosts?: number;
  /** How long runs are launched (default 3 min). */
  durationMs?: number;
  /** One run launched every this many ms (default 2 s). */
  runEveryMs?: number;
  /** How long each stage takes on an agent (default 1 s). */
  stageDelayMs?: number;
  /** How long runs still open after the stream may take to end (default 150 s). */
  settleMs?: number;
  netns?: boolean;
  log?: (line: string) => void;
}

export interface FleetSoakReport {
  runs: number;
  completed: number;
  /** Runs that did not complete (failed, cancelled or still open when the soak ended). */
  lost: number;
  /** Runs with a stage completed more than once. */
  duplicated: number;
  hostsKilled: number;
  /** Seconds from the kill to the completion of the slowest run that had a stage on the killed host. */
  maxRecoverySeconds: number | null;
  /** Each affected run's recovery, in seconds, sorted. */
  recoverySeconds: number[];
  /** Affected runs that never completed. */
  unrecovered: number;
  /** Failed heartbeats of the host whose key was rotated, from the rotation to the end. */
  rotationFailedHeartbeats: number;
  drain: { state: string; seconds: number | null; failedStages: number };
  /** What broke the hosts' isolation (empty: each ran in a namespace of its own, unreachable from the others). */
  isolationProblems: string[];
  line: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The summary line `pnpm soak:fleet` prints, exactly. */
export function soakLine(
  r: Pick<FleetSoakReport, 'completed' | 'lost' | 'duplicated' | 'hostsKilled' | 'maxRecoverySeconds'>,
): string {
  return `runs ${r.completed} completed, ${r.lost} lost, ${r.duplicated} duplicated; hosts killed ${r.hostsKilled}, max recovery ${r.maxRecoverySeconds === null ? '-' : r.maxRecoverySeconds.toFixed(1)} s`;
}

async function duplicatedRuns(fleet: Fleet): Promise<number> {
  const db = new Client({ connectionString: fleet.workflowDatabaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ runs: string }>(
      `SELECT count(DISTINCT s.invocation_id) AS runs
         FROM (SELECT target_id FROM audit_events WHERE action = 'stage.completed'
               GROUP BY target_id HAVING count(*) > 1) d
         JOIN run_stages s ON s.id = d.target_id`,
    );
    return Number(rows[0]?.runs ?? 0);
  } finally {
    await db.end();
  }
}

/**
 * The fleet soak (decision 86): a stream of runs over a fleet while one host's key is rotated, one host is killed
 * (SIGKILL of its runtime and agents) and one is drained; then every run is read back. A run is lost when it did
 * not complete, duplicated when one of its stages was completed twice (the audit says so). Recovery is measured
 * for the runs that had a stage on the killed host's agent when it died.
 */
export async function runFleetSoak(options: FleetSoakOptions = {}): Promise<FleetSoakReport> {
  const log = options.log ?? (() => undefined);
  const durationMs = options.durationMs ?? 180_000;
  const fleet = await startFleet({
    hosts: options.hosts ?? 3,
    stageDelayMs: options.stageDelayMs ?? 1_000,
    log,
    ...(options.netns === undefined ? {} : { netns: options.netns }),
  });
  try {
    const [killed, drained, rotated] = [fleet.hosts[0]!, fleet.hosts[1]!, fleet.hosts[2] ?? fleet.hosts[0]!];
    const isolationProblems = await fleet.isolationProblems();
    const runs: string[] = [];
    const doneAt = new Map<string, number>();
    const stream = (async () => {
      const every = options.runEveryMs ?? 2_000;
      const end = Date.now() + durationMs;
      while (Date.now() < end) {
        runs.push(await fleet.launchRun());
        await sleep(every);
      }
    })();

    const at = (fraction: number) => sleep(durationMs * fraction);
    await at(0.2);
    const failedBefore = fleet.failedHeartbeats(rotated);
    log(`soak: rotating the runtime key of ${rotated.name}`);
    await fleet.rotateKey(rotated);

    await at(0.2);
    // The kill is timed to hit a host at work: it waits (at most 30 s) until a run holds a stage there.
    const onKilled = new Set<string>();
    const holdingUntil = Date.now() + 30_000;
    do {
      for (const id of runs.slice(-10)) {
        const run = await fleet.readRun(id);
        const open = run.stageStates.some(
          (state, i) => run.owners[i] === killed.agentId && !['completed', 'skipped'].includes(state),
        );
        if (open && run.state !== 'completed') onKilled.add(id);
      }
      if (onKilled.size === 0) await sleep(200);
    } while (onKilled.size === 0 && Date.now() < holdingUntil);
    log(`soak: killing ${killed.name} (${onKilled.size} open run(s) hold a stage there)`);
    const killAt = Date.now();
    await fleet.killHost(killed);

    await at(0.2);
    log(`soak: draining ${drained.name}`);
    const drainStarted = Date.now();
    await fleet.drainHost(drained);
    const drainedWatch = (async () => {
      while (Date.now() - drainStarted < durationMs + (options.settleMs ?? 150_000)) {
        if ((await fleet.drainState(drained)) === 'drained') return (Date.now() - drainStarted) / 1000;
        await sleep(1000);
      }
      return null;
    })();

    await stream;
    // Every run is read until it ends or the settle time is up.
    const settleEnd = Date.now() + (options.settleMs ?? 150_000);
    const states = new Map<string, string>();
    const lastRead = new Map<string, FleetRun>();
    for (;;) {
      let open = 0;
      for (const id of runs) {
        if (doneAt.has(id)) continue;
        const run = await fleet.readRun(id);
        states.set(id, run.state);
        lastRead.set(id, run);
        if (['completed', 'failed', 'cancelled'].includes(run.state)) doneAt.set(id, Date.now());
        else open += 1;
      }
      if (open === 0 || Date.now() > settleEnd) break;
      await sleep(1000);
    }
    const completed = [...states.values()].filter((s) => s === 'completed').length;
    // Recovery is read from the run itself (its last stage's completion), not from when this loop first saw it
    // completed: the loop only starts once the stream of launches has ended, long after most recoveries.
    const recoverySeconds = [...onKilled]
      .filter((id) => states.get(id) === 'completed')
      .map((id) => Math.max(0, ((lastRead.get(id)?.completedAt ?? doneAt.get(id)!) - killAt) / 1000))
      .sort((a, b) => a - b);
    for (const id of onKilled) {
      const run = lastRead.get(id);
      if (!run) continue;
      const after =
        run.completedAt === null
          ? 'not completed'
          : `completed ${((run.completedAt - killAt) / 1000).toFixed(1)} s after the kill`;
      log(
        `soak: run ${id} (held a stage on ${killed.name}): ${run.state}, ${after}; stages ${run.stageStates
          .map(
            (state, i) =>
              `${state}@${fleet.hosts.find((h) => h.agentId === run.owners[i])?.name ?? run.owners[i] ?? '-'}`,
          )
          .join(', ')}`,
      );
    }
    const unrecovered = [...onKilled].filter((id) => states.get(id) !== 'completed').length;
    const drainSeconds = await drainedWatch;
    // Stages the drained host's agent held that ended failed (a drain's target is none).
    const drainFailed = [...lastRead.values()].flatMap((run) =>
      run.stageStates.filter((state, i) => run.owners[i] === drained.agentId && state === 'failed'),
    ).length;
    const report: Omit<FleetSoakReport, 'line'> = {
      runs: runs.length,
      completed,
      lost: runs.length - completed,
      duplicated: await duplicatedRuns(fleet),
      hostsKilled: 1,
      maxRecoverySeconds: recoverySeconds.length > 0 ? recoverySeconds[recoverySeconds.length - 1]! : null,
      recoverySeconds,
      unrecovered,
      rotationFailedHeartbeats: fleet.failedHeartbeats(rotated) - failedBefore,
      drain: { state: await fleet.drainState(drained), seconds: drainSeconds, failedStages: drainFailed },
      isolationProblems,
    };
    return { ...report, line: soakLine(report) };
  } finally {
    await fleet.close();
  }
}
