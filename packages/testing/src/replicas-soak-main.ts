/**
 * `pnpm soak:replicas`: two replicas of the hub, the Workflow API, the worker and the console router behind
 * HAProxy; partner traffic through the SDK for `SVC_SOAK_REPLICAS_SECONDS` (default 180) while one replica of
 * each service is killed with SIGKILL in turn and restarted. Prints the summary line on stdout (the details on
 * stderr); exits 1 when a failure reached the caller, a run was lost, a delivery was duplicated or missing, or a
 * route was unavailable for more than 5 s.
 */
import { runReplicasSoak } from './replicas-soak';

async function main(): Promise<number> {
  const seconds = Number(process.env.SVC_SOAK_REPLICAS_SECONDS ?? 180);
  const report = await runReplicasSoak({
    durationMs: Math.max(30, seconds) * 1000,
    log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
  });
  process.stderr.write(
    `${JSON.stringify({
      runs: report.runs,
      kills: report.kills,
      routes: report.routes,
      redelivered: report.redelivered,
      deliveries_missing: report.deliveriesMissing,
      errors: report.errors,
      balancer_events: report.balancerEvents,
    })}\n`,
  );
  process.stdout.write(`${report.line}\n`);
  const ok =
    report.surfaced === 0 &&
    report.runsLost === 0 &&
    report.deliveriesDuplicated === 0 &&
    report.deliveriesMissing === 0 &&
    report.maxUnavailableSeconds <= 5;
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak:replicas failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(2);
  },
);
