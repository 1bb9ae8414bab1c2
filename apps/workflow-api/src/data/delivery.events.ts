import { newId } from '@svc/service-kit';
import type { Db, Sql, Tx } from '../db';
import { deliveryBody } from '../domain/delivery-event';
import type { DeliveryEventType, OperationalEventType } from '../domain/delivery-event';
import type { Artifact, Invocation } from '../generated/prisma/client';
import type { DeliveryJob, DeliveryQueue } from './delivery.queue';

/**
 * In the transaction of the state change: one delivery row per active subscription of the project that wants
 * the event (at most one per subscription, invocation and event). Returns the jobs to enqueue after the commit.
 */
export async function recordDeliveryEvent(
  sql: Sql,
  invocation: Invocation,
  event: DeliveryEventType,
  artifact: Pick<Artifact, 'id' | 'schemaId' | 'schemaName' | 'schemaVersion'> | null,
  at: Date,
): Promise<DeliveryJob[]> {
  const subscriptions = await sql.rows<{ id: string; events: unknown }>({
    name: 'delivery_subscriptions_active',
    text: `SELECT id, events FROM delivery_subscriptions
      WHERE project_id = $1 AND is_active AND deleted_at IS NULL`,
    values: [invocation.projectId],
  });
  const wanted = subscriptions.filter(
    (s) => Array.isArray(s.events) && (s.events as string[]).includes(event),
  );
  if (wanted.length === 0) return [];
  const body = deliveryBody(event, invocation, artifact, at);
  const created = await sql.rows<{ id: string }>({
    name: 'deliveries_record_event',
    text: `INSERT INTO deliveries (id, subscription_id, workspace_id, project_id, invocation_id, event, body,
        next_attempt_at)
      SELECT d.id, d.subscription_id, $3, $4, $5, $6, $7, $8::timestamptz
      FROM unnest($1::text[], $2::text[]) AS d(id, subscription_id)
      ON CONFLICT DO NOTHING RETURNING id`,
    values: [
      wanted.map(() => newId('msg')),
      wanted.map((s) => s.id),
      invocation.workspaceId,
      invocation.projectId,
      invocation.id,
      event,
      body,
      at.toISOString(),
    ],
  });
  return created.map((row) => ({
    deliveryId: row.id,
    trigger: 'scheduled' as const,
    invocationId: invocation.id,
  }));
}

/**
 * In the transaction that settled a delivery: an operational event (`body` already built) for every active
 * subscription of the project that wants it, one per subscription and cause (`subjectId`, the attempt that caused
 * it). Its `invocation_id` is the invocation of the delivery it is about. Returns the jobs to enqueue after the
 * commit.
 */
export async function recordOperationalEvent(
  tx: Tx,
  event: {
    workspaceId: string;
    projectId: string;
    invocationId: string;
    type: OperationalEventType;
    subjectId: string;
    body: string;
    at: Date;
  },
): Promise<DeliveryJob[]> {
  const subscriptions = await tx.deliverySubscription.findMany({
    where: { projectId: event.projectId, isActive: true, deletedAt: null },
    select: { id: true, events: true },
  });
  const wanted = subscriptions.filter(
    (s) => Array.isArray(s.events) && (s.events as string[]).includes(event.type),
  );
  if (wanted.length === 0) return [];
  const created = await tx.delivery.createManyAndReturn({
    data: wanted.map((s) => ({
      id: newId('msg'),
      subscriptionId: s.id,
      workspaceId: event.workspaceId,
      projectId: event.projectId,
      invocationId: event.invocationId,
      event: event.type,
      subjectId: event.subjectId,
      body: event.body,
      nextAttemptAt: event.at,
    })),
    skipDuplicates: true,
    select: { id: true },
  });
  return created.map((row) => ({ deliveryId: row.id, trigger: 'scheduled' as const }));
}

/**
 * After the commit: enqueue, and stamp what was enqueued (a failure is left to the sweeper). True when the
 * queue took the jobs.
 */
export async function dispatchDeliveries(
  db: Db,
  queue: DeliveryQueue,
  jobs: DeliveryJob[],
): Promise<boolean> {
  if (jobs.length === 0) return true;
  if (!(await queue.enqueue(jobs))) return false;
  await db.delivery
    .updateMany({ where: { id: { in: jobs.map((j) => j.deliveryId) } }, data: { enqueuedAt: new Date() } })
    .catch(() => undefined);
  return true;
}
