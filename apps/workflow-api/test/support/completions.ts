import type { Workflow } from '@svc/sdk';
import type { Database } from '../../src/db';

/**
 * Every invocation completed exactly once: its artifact served, one run, one artifact and one completion audit
 * event each — what the fault and replica suites prove after killing processes.
 */
export async function expectEachCompletedOnce(
  workflow: Workflow,
  database: Database,
  ids: string[],
  timeoutMs: number,
): Promise<void> {
  await Promise.all(
    ids.map((invocationId) =>
      workflow.invocations.waitForArtifact(invocationId, { timeoutMs, intervalMs: 200, waitFor: 'all' }),
    ),
  );
  const db = database.prisma;
  const [runs, artifacts, completions] = await Promise.all([
    db.workflowRun.groupBy({
      by: ['invocationId'],
      where: { invocationId: { in: ids } },
      _count: { _all: true },
    }),
    db.artifact.count({ where: { invocationId: { in: ids } } }),
    db.auditEvent.groupBy({
      by: ['targetId'],
      where: { targetId: { in: ids }, action: 'invocation.completed' },
      _count: { _all: true },
    }),
  ]);
  expect(runs).toHaveLength(ids.length);
  expect(runs.every((r) => r._count._all === 1)).toBe(true);
  expect(artifacts).toBe(ids.length);
  expect(completions).toHaveLength(ids.length);
  expect(completions.every((c) => c._count._all === 1)).toBe(true);
}
