import { canCreateFleetNetwork, fleetNamespaces } from '../src/fleet-network';
import { runFleetSoak } from '../src/fleet-soak';
import type { FleetSoakReport } from '../src/fleet-soak';

/**
 * The short fleet soak (`pnpm soak:fleet` runs the long one): three hosts, each in a network namespace of its
 * own, a stream of runs for 24 s while one host's key is rotated, one is killed and one drained.
 */
jest.setTimeout(175_000);

const describeAsRoot = canCreateFleetNetwork() ? describe : describe.skip;

describeAsRoot('fleet soak, short', () => {
  let report: FleetSoakReport;
  beforeAll(async () => {
    report = await runFleetSoak({ durationMs: 24_000, runEveryMs: 1_500, settleMs: 40_000 });
    process.stderr.write(`${report.line}\n${JSON.stringify({ ...report, line: undefined })}\n`);
  }, 175_000);

  test('when the soak ends, then each host ran in its own namespace and the namespaces are gone', () => {
    expect(report.isolationProblems).toEqual([]);
    expect(fleetNamespaces()).toEqual([]);
    expect(report.line).toMatch(
      /^runs \d+ completed, \d+ lost, \d+ duplicated; hosts killed 1, max recovery (\d+\.\d|-) s$/,
    );
  });

  test('when a key is rotated on a running host, then no heartbeat fails', () => {
    expect(report.rotationFailedHeartbeats).toBe(0);
  });

  test('when a host drains under a stream of runs, then it is drained with 0 failed stages and no stage is completed twice', () => {
    expect(report.drain.state).toBe('drained');
    expect(report.drain.failedStages).toBe(0);
    expect(report.duplicated).toBe(0);
  });

  // Holds once "hosts that die" (issue 30, item 3) is merged: until then the killed host's agent keeps
  // looking online for 90 s and its stages may not find a new owner within the soak.
  test('when a host is killed, then every run completes, those it held within 60 s', () => {
    expect(report.lost).toBe(0);
    expect(report.unrecovered).toBe(0);
    expect(report.maxRecoverySeconds ?? 0).toBeLessThanOrEqual(60);
  });
});
