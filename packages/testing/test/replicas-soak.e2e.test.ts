import { runReplicasSoak } from '../src/replicas-soak';
import type { ReplicasSoakReport } from '../src/replicas-soak';

/**
 * The short replicas soak (`pnpm soak:replicas` runs the long one): two replicas of each service behind HAProxy,
 * partner traffic through the built SDK for 20 s while one replica of the Workflow API, the worker, the hub and
 * the console router is killed with SIGKILL and restarted.
 */
jest.setTimeout(180_000);

let report: ReplicasSoakReport;

beforeAll(async () => {
  // The route's unavailability is a timing: the report prints it (docs/benchmarks.md), nothing asserts it.
  report = await runReplicasSoak({ durationMs: 20_000, settleMs: 30_000 });
  process.stderr.write(`${report.line}\n${JSON.stringify({ ...report, line: undefined })}\n`);
}, 180_000);

test('when one replica of each service is killed in turn, then every service was killed once and traffic reached every route', () => {
  expect(report.kills.map((k) => k.split(' ')[0]).sort()).toEqual(['api', 'hub', 'router', 'worker']);
  for (const figures of Object.values(report.routes)) expect(figures.requests).toBeGreaterThan(5);
  expect(report.line).toMatch(
    /^requests \d+, failed \d+ \(all retried by the SDK: (yes|no)\), runs lost \d+, deliveries duplicated \d+, max unavailability \d+\.\d s$/,
  );
});

test('when replicas are killed under traffic, then no failure reaches the caller through the SDK', () => {
  expect(report.errors).toEqual([]);
  expect(report.surfaced).toBe(0);
});

test('when replicas are killed under traffic, then every run completes and its completion is delivered once per delivery id', () => {
  expect(report.runsLost).toBe(0);
  expect(report.deliveriesMissing).toBe(0);
  expect(report.deliveriesDuplicated).toBe(0);
});
