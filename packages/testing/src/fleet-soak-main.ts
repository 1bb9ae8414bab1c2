/**
 * `pnpm soak:fleet`: three runtime hosts in network namespaces, a stream of runs for `SVC_SOAK_FLEET_SECONDS`
 * (default 180), one key rotation, one host killed and one drained. Prints the summary line on stdout (and the
 * details on stderr); exits 1 when a run was lost or duplicated, a heartbeat failed over the rotation or a
 * drained stage failed.
 */
import { canCreateFleetNetwork } from './fleet-network';
import { runFleetSoak } from './fleet-soak';

async function main(): Promise<number> {
  const seconds = Number(process.env.SVC_SOAK_FLEET_SECONDS ?? 180);
  const netns = canCreateFleetNetwork();
  if (!netns) process.stderr.write('soak: not root (or no iproute2): the hosts share this namespace\n');
  const report = await runFleetSoak({
    durationMs: Math.max(30, seconds) * 1000,
    netns,
    log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
  });
  process.stderr.write(
    `${JSON.stringify({
      runs: report.runs,
      recovery_seconds: report.recoverySeconds.map((s) => Math.round(s * 10) / 10),
      unrecovered: report.unrecovered,
      rotation_failed_heartbeats: report.rotationFailedHeartbeats,
      drain: report.drain,
      isolation_problems: report.isolationProblems,
    })}\n`,
  );
  process.stdout.write(`${report.line}\n`);
  const ok =
    report.lost === 0 &&
    report.duplicated === 0 &&
    report.rotationFailedHeartbeats === 0 &&
    report.drain.failedStages === 0;
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak:fleet failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(2);
  },
);
