import { newId } from '@svc/service-kit';
import type { Db, Tx } from '../db';
import type { EngineQueue, ReconcileJob } from './reconcile.queue';

export type OutboxReason =
  | 'launch'
  | 'approval'
  | 'stage_completed'
  | 'stage_released'
  | 'artifact_published'
  | 'sweep'
  /** The sweeper's check of a run whose stage owner went silent (engine/check-silent-owners.ts). */
  | 'owner_check';

/**
 * Writes one outbox row inside the caller's transaction; returns the job to enqueue after the commit. A job that
 * starts a run names its project (`projectId`), so it takes its turn with the project's other launches.
 */
export async function writeOutbox(
  tx: Tx,
  invocationId: string,
  reason: OutboxReason,
  projectId?: string,
): Promise<ReconcileJob> {
  const id = newId('obx');
  await tx.outboxEntry.create({ data: { id, invocationId, reason } });
  return { outboxId: id, invocationId, ...(projectId ? { projectId } : {}) };
}

/**
 * After the commit: enqueue the rows' jobs and stamp them as enqueued. When Redis is down nothing is stamped and
 * the sweeper enqueues them later; a duplicate enqueue is harmless (the job id is the row id).
 */
export async function dispatchOutbox(db: Db, queue: EngineQueue, jobs: ReconcileJob[]): Promise<void> {
  if (jobs.length === 0) return;
  const ok = await queue.enqueue(jobs);
  if (!ok) return;
  await db.outboxEntry
    .updateMany({
      where: { id: { in: jobs.map((j) => j.outboxId) }, processedAt: null },
      data: { enqueuedAt: new Date(), attempts: { increment: 1 } },
    })
    .catch(() => undefined);
}

/**
 * After the commit, for rows written already stamped as enqueued (the one-statement launch): enqueue their jobs;
 * when Redis refuses, the stamps are cleared, so the sweeper enqueues the rows at its next pass as it does any
 * row never enqueued.
 */
export async function dispatchStampedOutbox(db: Db, queue: EngineQueue, jobs: ReconcileJob[]): Promise<void> {
  if (jobs.length === 0 || (await queue.enqueue(jobs))) return;
  await db.outboxEntry
    .updateMany({
      where: { id: { in: jobs.map((j) => j.outboxId) }, processedAt: null },
      data: { enqueuedAt: null },
    })
    .catch(() => undefined);
}
