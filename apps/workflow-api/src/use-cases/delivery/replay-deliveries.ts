import type { Actor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import type { ProjectRef } from '../../auth/project-directory';
import { dispatchDeliveries } from '../../data/delivery.events';
import type { DeliveryJob } from '../../data/delivery.queue';
import type { WorkflowDeps } from '../../deps';
import { MAX_REPLAY } from '../../domain/delivery-subscription';
import { subscriptionNotFound } from '../../domain/errors';
import { AppError } from '@svc/service-kit';

export type ReplayInput =
  WorkflowApi.operations['replayDeliveries']['requestBody']['content']['application/json'];

/** Jobs handed to the queue per call when many deliveries are dispatched at once. */
const DISPATCH_CHUNK = 500;

/** Hands jobs to the queue in chunks, stamping each chunk as enqueued (a refused chunk is left to the sweeper). */
async function dispatchInChunks(deps: WorkflowDeps, jobs: DeliveryJob[]): Promise<void> {
  for (let i = 0; i < jobs.length; i += DISPATCH_CHUNK) {
    await dispatchDeliveries(deps.db, deps.deliveries, jobs.slice(i, i + DISPATCH_CHUNK));
  }
}

/**
 * Sends again the project's deliveries in the given statuses (failed by default) created in [since, until, by
 * default now) whose subscription is active (at most
 * {@link MAX_REPLAY}, oldest first). Returns how many were queued.
 */
export async function replayDeliveries(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  input: ReplayInput,
  requestId?: string,
): Promise<number> {
  const since = new Date(input.since);
  const until = input.until !== undefined ? new Date(input.until) : deps.now();
  const statuses = [...new Set(input.statuses ?? ['failed'])];
  if (Number.isNaN(since.getTime()) || Number.isNaN(until.getTime()) || since > until) {
    throw new AppError({
      status: 400,
      code: 'time_range_invalid',
      detail: '`since` must be a date-time at or before `until` (now when `until` is not given).',
    });
  }
  if (input.subscription_id !== undefined) {
    const known = await deps.db.deliverySubscription.findFirst({
      where: { id: input.subscription_id, projectId: project.id },
      select: { id: true },
    });
    if (!known) throw subscriptionNotFound(input.subscription_id);
  }
  const now = deps.now();
  const replayed = await deps.db.$transaction(async (tx) => {
    const active = await tx.deliverySubscription.findMany({
      where: {
        projectId: project.id,
        isActive: true,
        deletedAt: null,
        ...(input.subscription_id !== undefined ? { id: input.subscription_id } : {}),
      },
      select: { id: true },
    });
    const candidates =
      active.length === 0
        ? []
        : await tx.delivery.findMany({
            where: {
              projectId: project.id,
              status: { in: statuses },
              createdAt: { gte: since, lt: until },
              subscriptionId: { in: active.map((s) => s.id) },
            },
            orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
            take: MAX_REPLAY,
            select: { id: true },
          });
    const rows =
      candidates.length === 0
        ? []
        : await tx.delivery.updateManyAndReturn({
            // Still in a replayed status: a delivery that changed since it was read is left alone.
            where: { id: { in: candidates.map((c) => c.id) }, status: { in: statuses } },
            data: { status: 'pending', completedAt: null, nextAttemptAt: now, failureReason: null },
            select: { id: true },
          });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery.replayed',
        targetType: 'project',
        targetId: project.id,
        data: {
          count: rows.length,
          since: since.toISOString(),
          until: until.toISOString(),
          statuses,
          ...(input.subscription_id !== undefined ? { subscription_id: input.subscription_id } : {}),
        },
        requestId,
      },
      tx,
    );
    return rows.map((row) => row.id);
  });
  await dispatchInChunks(
    deps,
    replayed.map((deliveryId) => ({ deliveryId, trigger: 'replay' as const })),
  );
  return replayed.length;
}
