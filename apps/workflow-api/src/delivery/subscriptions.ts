import type { Actor } from '@svc/auth';
import { generateSigningSecret } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import { AppError, newId } from '@svc/service-kit';
import type { SecretBox } from '@svc/service-kit';
import type { ProjectRef } from '../auth/project-directory';
import type { Tx } from '../db';
import type { WorkflowDeps } from '../deps';
import type { Delivery, DeliveryAttempt, DeliverySubscription, Prisma } from '../generated/prisma/client';
import { dispatchDeliveries } from './events';
import type { DeliveryJob } from './queue';
import { checkDeliveryUrl } from './url-guard';

/**
 * Delivery subscriptions (create, read, change, delete, rotate the signing secret), inspection of deliveries and
 * their attempts, and manual redelivery / replay. Signing secrets are sealed with the subscription id as associated
 * data and leave this module in plain text only in the answers to creation and rotation.
 */

type Schemas = WorkflowApi.components['schemas'];
export type DeliveryEventType = Schemas['DeliveryEventType'];
export type DeliveryStatus = Schemas['DeliveryStatus'];
export type DeliverySubscriptionWire = Schemas['DeliverySubscription'];
export type DeliveryWire = Schemas['Delivery'];
export type DeliveryDetailWire = Schemas['DeliveryDetail'];
type DeliveryAttemptWire = Schemas['DeliveryAttempt'];

/** Rotation grace when the request does not say: the previous secret keeps signing for 24 h. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 86_400;
/** At most this many deliveries are replayed by one call. */
export const MAX_REPLAY = 10_000;
/** Jobs handed to the queue per call when many deliveries are dispatched at once. */
const DISPATCH_CHUNK = 500;
export const DEFAULT_DELIVERY_PAGE = 50;
export const MAX_DELIVERY_PAGE = 200;

const subscriptionNotFound = (id: string) =>
  new AppError({
    status: 404,
    code: 'delivery_subscription_not_found',
    detail: `No delivery subscription '${id}' in this project.`,
  });

const deliveryNotFound = (id: string) =>
  new AppError({ status: 404, code: 'delivery_not_found', detail: `No delivery '${id}' in this project.` });

function secretBoxOf(deps: WorkflowDeps): SecretBox {
  const box = deps.delivery.secrets;
  if (!box) {
    throw new AppError({
      status: 503,
      code: 'delivery_not_configured',
      detail: 'Signed delivery is not configured on this deployment (no encryption key for signing secrets).',
      message: 'WORKFLOW_ENCRYPTION_KEYS is not configured; delivery subscriptions cannot be managed',
    });
  }
  return box;
}

// ---------------------------------------------------------------------------------------------------------------
// Wire shapes. Never the sealed secrets.

export function presentSubscription(row: DeliverySubscription, now: Date): DeliverySubscriptionWire {
  const rotationEnds =
    row.previousSecretSealed && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now
      ? row.previousSecretExpiresAt.toISOString()
      : null;
  return {
    subscription_id: row.id,
    project_id: row.projectId,
    url: row.url,
    events: (Array.isArray(row.events) ? row.events : []) as DeliveryEventType[],
    description: row.description,
    is_active: row.isActive,
    disabled_reason: row.disabledReason,
    secret_rotation_ends_at: rotationEnds,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function presentDelivery(row: Delivery): DeliveryWire {
  return {
    delivery_id: row.id,
    subscription_id: row.subscriptionId,
    invocation_id: row.invocationId,
    event: row.event as DeliveryEventType,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
    last_status_code: row.lastStatusCode,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

function presentAttempt(row: DeliveryAttempt): DeliveryAttemptWire {
  return {
    attempt: row.attempt,
    started_at: row.startedAt.toISOString(),
    status_code: row.statusCode,
    latency_ms: row.latencyMs,
    error: row.error,
    response_snippet: row.responseSnippet,
    trigger: row.trigger as DeliveryAttemptWire['trigger'],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Subscriptions

export interface CreateSubscriptionInput {
  url: string;
  events: DeliveryEventType[];
  description?: string;
}

export interface PatchSubscriptionInput {
  url?: string;
  events?: DeliveryEventType[];
  description?: string;
  is_active?: boolean;
}

/** Checks the URL like the sender will (scheme, credentials, every resolved address); the normalised URL. */
async function checkedUrl(deps: WorkflowDeps, raw: string): Promise<URL> {
  const { url } = await checkDeliveryUrl(raw, { allowLoopbackHttp: deps.delivery.allowLoopbackHttp });
  return url;
}

const uniqueEvents = (events: DeliveryEventType[]): DeliveryEventType[] => [...new Set(events)];

/** An empty description clears it. */
const descriptionOf = (description: string | undefined): string | null =>
  description === undefined || description.trim() === '' ? null : description;

/** Pending deliveries of a subscription that was disabled or deleted will not be sent: mark them skipped. */
async function skipPending(tx: Tx, subscriptionId: string, now: Date): Promise<number> {
  const skipped = await tx.delivery.updateMany({
    where: { subscriptionId, status: 'pending' },
    data: { status: 'skipped', completedAt: now, nextAttemptAt: null },
  });
  return skipped.count;
}

/** Locks the project's live subscription row for the rest of the transaction (404 when there is none). */
async function lockSubscription(tx: Tx, projectId: string, id: string): Promise<DeliverySubscription> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM delivery_subscriptions
    WHERE id = ${id} AND project_id = ${projectId} AND deleted_at IS NULL
    FOR UPDATE`;
  if (locked.length === 0) throw subscriptionNotFound(id);
  return tx.deliverySubscription.findUniqueOrThrow({ where: { id } });
}

/**
 * Saves a subscription after the URL passed the SSRF check, with a new signing secret sealed for this
 * subscription only. The plain secret is returned to be shown once and is never stored or audited.
 */
export async function createDeliverySubscription(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  input: CreateSubscriptionInput,
  requestId?: string,
): Promise<{ subscription: DeliverySubscriptionWire; signingSecret: string }> {
  const box = secretBoxOf(deps);
  const url = await checkedUrl(deps, input.url);
  const events = uniqueEvents(input.events);
  const id = newId('dsub');
  const signingSecret = generateSigningSecret();
  const now = deps.now();
  const row = await deps.db.$transaction(async (tx) => {
    const created = await tx.deliverySubscription.create({
      data: {
        id,
        workspaceId: project.workspace.id,
        projectId: project.id,
        url: url.href,
        events,
        description: descriptionOf(input.description),
        secretSealed: box.seal(signingSecret, id),
        createdAt: now,
        updatedAt: now,
      },
    });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery_subscription.created',
        targetType: 'delivery_subscription',
        targetId: id,
        // The origin only: a path or query string may carry a receiver's own token.
        data: { url_origin: url.origin, events },
        requestId,
      },
      tx,
    );
    return created;
  });
  return { subscription: presentSubscription(row, now), signingSecret };
}

/** The project's subscriptions that are not deleted, newest first. */
export async function listDeliverySubscriptions(
  deps: WorkflowDeps,
  projectId: string,
): Promise<DeliverySubscriptionWire[]> {
  const rows = await deps.db.deliverySubscription.findMany({
    where: { projectId, deletedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  const now = deps.now();
  return rows.map((row) => presentSubscription(row, now));
}

export async function getDeliverySubscription(
  deps: WorkflowDeps,
  projectId: string,
  id: string,
): Promise<DeliverySubscriptionWire> {
  const row = await deps.db.deliverySubscription.findFirst({ where: { id, projectId, deletedAt: null } });
  if (!row) throw subscriptionNotFound(id);
  return presentSubscription(row, deps.now());
}

/**
 * Changes the URL (checked again), events or description, or disables (`manual`; pending deliveries are
 * skipped) or enables (reason and exhaustion count cleared) the subscription. A patch that changes nothing
 * writes nothing.
 */
export async function updateDeliverySubscription(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  input: PatchSubscriptionInput,
  requestId?: string,
): Promise<DeliverySubscriptionWire> {
  // Outside the transaction: the check may resolve a host name, which must not hold a row lock.
  const url = input.url !== undefined ? await checkedUrl(deps, input.url) : undefined;
  const now = deps.now();
  const row = await deps.db.$transaction(async (tx) => {
    const current = await lockSubscription(tx, project.id, id);
    const data: Prisma.DeliverySubscriptionUpdateInput = {};
    const fields: string[] = [];
    if (url && url.href !== current.url) {
      data.url = url.href;
      fields.push('url');
    }
    if (input.events !== undefined) {
      const events = uniqueEvents(input.events);
      const before = Array.isArray(current.events) ? (current.events as string[]) : [];
      if (events.length !== before.length || events.some((event, i) => event !== before[i])) {
        data.events = events;
        fields.push('events');
      }
    }
    if (input.description !== undefined) {
      const description = descriptionOf(input.description);
      if (description !== current.description) {
        data.description = description;
        fields.push('description');
      }
    }
    let skipped = 0;
    if (input.is_active === false && current.isActive) {
      data.isActive = false;
      data.disabledReason = 'manual';
      fields.push('is_active');
      skipped = await skipPending(tx, id, now);
    } else if (input.is_active === true) {
      if (!current.isActive) fields.push('is_active');
      if (!current.isActive || current.disabledReason !== null || current.consecutiveExhaustions !== 0) {
        data.isActive = true;
        data.disabledReason = null;
        data.consecutiveExhaustions = 0;
      }
    }
    if (Object.keys(data).length === 0) return current;
    const updated = await tx.deliverySubscription.update({
      where: { id },
      data: { ...data, updatedAt: now },
    });
    if (fields.length > 0) {
      await deps.audit.record(
        {
          workspaceId: project.workspace.id,
          projectId: project.id,
          actor,
          action: 'delivery_subscription.updated',
          targetType: 'delivery_subscription',
          targetId: id,
          data: {
            fields,
            is_active: updated.isActive,
            ...(fields.includes('url') ? { url_origin: new URL(updated.url).origin } : {}),
            ...(fields.includes('events') ? { events: updated.events } : {}),
            ...(skipped > 0 ? { skipped_deliveries: skipped } : {}),
          },
          requestId,
        },
        tx,
      );
    }
    return updated;
  });
  return presentSubscription(row, now);
}

/** Soft delete: the row (and its delivery history) stays, inactive; its pending deliveries are skipped. */
export async function deleteDeliverySubscription(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  requestId?: string,
): Promise<void> {
  const now = deps.now();
  await deps.db.$transaction(async (tx) => {
    await lockSubscription(tx, project.id, id);
    await tx.deliverySubscription.update({
      where: { id },
      data: { deletedAt: now, isActive: false, updatedAt: now },
    });
    const skipped = await skipPending(tx, id, now);
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery_subscription.deleted',
        targetType: 'delivery_subscription',
        targetId: id,
        data: { skipped_deliveries: skipped },
        requestId,
      },
      tx,
    );
  });
}

/**
 * A new signing secret (returned once). The current one becomes the previous secret and keeps signing for
 * `graceSeconds` (0: it stops at once); a previous secret from an earlier rotation is dropped.
 */
export async function rotateDeliverySubscriptionSecret(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  graceSeconds: number = DEFAULT_ROTATION_GRACE_SECONDS,
  requestId?: string,
): Promise<{ subscription: DeliverySubscriptionWire; signingSecret: string }> {
  const box = secretBoxOf(deps);
  const signingSecret = generateSigningSecret();
  const now = deps.now();
  const row = await deps.db.$transaction(async (tx) => {
    const current = await lockSubscription(tx, project.id, id);
    const grace = graceSeconds > 0;
    const previousSecretExpiresAt = grace ? new Date(now.getTime() + graceSeconds * 1000) : null;
    const updated = await tx.deliverySubscription.update({
      where: { id },
      data: {
        secretSealed: box.seal(signingSecret, id),
        previousSecretSealed: grace ? current.secretSealed : null,
        previousSecretExpiresAt,
        updatedAt: now,
      },
    });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery_subscription.secret_rotated',
        targetType: 'delivery_subscription',
        targetId: id,
        data: {
          grace_seconds: graceSeconds,
          previous_secret_expires_at: previousSecretExpiresAt?.toISOString() ?? null,
        },
        requestId,
      },
      tx,
    );
    return updated;
  });
  return { subscription: presentSubscription(row, now), signingSecret };
}

// ---------------------------------------------------------------------------------------------------------------
// Inspection

export interface ListDeliveriesFilter {
  status?: DeliveryStatus;
  event?: DeliveryEventType;
  subscriptionId?: string;
  invocationId?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

interface DeliveryCursor {
  createdAt: Date;
  id: string;
}

function encodeCursor(row: Pick<Delivery, 'createdAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): DeliveryCursor {
  const invalid = () =>
    new AppError({
      status: 400,
      code: 'cursor_invalid',
      detail: 'The cursor is not one this API returned; start again without it.',
    });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || id === '') throw invalid();
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime())) throw invalid();
  return { createdAt, id };
}

/** A page of the project's deliveries, newest first (created time, then id), with a cursor for the next. */
export async function listDeliveries(
  deps: WorkflowDeps,
  projectId: string,
  filter: ListDeliveriesFilter,
): Promise<{ data: DeliveryWire[]; next_cursor: string | null }> {
  const limit = Math.min(Math.max(filter.limit ?? DEFAULT_DELIVERY_PAGE, 1), MAX_DELIVERY_PAGE);
  const and: Prisma.DeliveryWhereInput[] = [{ projectId }];
  if (filter.status) and.push({ status: filter.status });
  if (filter.event) and.push({ event: filter.event });
  if (filter.subscriptionId) and.push({ subscriptionId: filter.subscriptionId });
  if (filter.invocationId) and.push({ invocationId: filter.invocationId });
  if (filter.since) and.push({ createdAt: { gte: new Date(filter.since) } });
  if (filter.until) and.push({ createdAt: { lt: new Date(filter.until) } });
  if (filter.cursor) {
    const after = decodeCursor(filter.cursor);
    and.push({
      OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
    });
  }
  const rows = await deps.db.delivery.findMany({
    where: { AND: and },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(presentDelivery),
    next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
  };
}

/** One delivery with its body (as sent) and every attempt, in order. */
export async function getDelivery(
  deps: WorkflowDeps,
  projectId: string,
  id: string,
): Promise<DeliveryDetailWire> {
  const row = await deps.db.delivery.findFirst({ where: { id, projectId } });
  if (!row) throw deliveryNotFound(id);
  const attempts = await deps.db.deliveryAttempt.findMany({
    where: { deliveryId: id },
    orderBy: [{ attempt: 'asc' }, { startedAt: 'asc' }],
  });
  return {
    ...presentDelivery(row),
    body: JSON.parse(row.body) as DeliveryDetailWire['body'],
    attempt_log: attempts.map(presentAttempt),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Redelivery and replay

const subscriptionDisabled = () =>
  new AppError({
    status: 409,
    code: 'subscription_disabled',
    detail: 'The delivery subscription is disabled or deleted; enable it before sending again.',
  });

/** Hands jobs to the queue in chunks, stamping each chunk as enqueued (a refused chunk is left to the sweeper). */
async function dispatchInChunks(deps: WorkflowDeps, jobs: DeliveryJob[]): Promise<void> {
  for (let i = 0; i < jobs.length; i += DISPATCH_CHUNK) {
    await dispatchDeliveries(deps.db, deps.deliveries, jobs.slice(i, i + DISPATCH_CHUNK));
  }
}

/** A new attempt now, whatever the delivery's status (same delivery id; the sender signs afresh). */
export async function redeliverDelivery(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  id: string,
  requestId?: string,
): Promise<DeliveryWire> {
  const delivery = await deps.db.delivery.findFirst({ where: { id, projectId: project.id } });
  if (!delivery) throw deliveryNotFound(id);
  const now = deps.now();
  const updated = await deps.db.$transaction(async (tx) => {
    const subscription = await tx.deliverySubscription.findUnique({ where: { id: delivery.subscriptionId } });
    if (!subscription || !subscription.isActive || subscription.deletedAt) throw subscriptionDisabled();
    const row = await tx.delivery.update({
      where: { id },
      data: { status: 'pending', completedAt: null, nextAttemptAt: now },
    });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'delivery.redelivered',
        targetType: 'delivery',
        targetId: id,
        data: { subscription_id: delivery.subscriptionId, previous_status: delivery.status },
        requestId,
      },
      tx,
    );
    return row;
  });
  await dispatchDeliveries(deps.db, deps.deliveries, [{ deliveryId: id, trigger: 'manual' }]);
  return presentDelivery(updated);
}

export interface ReplayInput {
  since: string;
  until: string;
  subscription_id?: string;
}

/**
 * Sends again the project's failed deliveries created in [since, until) whose subscription is active (at most
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
  const until = new Date(input.until);
  if (Number.isNaN(since.getTime()) || Number.isNaN(until.getTime()) || since > until) {
    throw new AppError({
      status: 400,
      code: 'time_range_invalid',
      detail: '`since` must be a date-time at or before `until`.',
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
              status: 'failed',
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
            // Still failed: a delivery that changed since it was read is left alone.
            where: { id: { in: candidates.map((c) => c.id) }, status: 'failed' },
            data: { status: 'pending', completedAt: null, nextAttemptAt: now },
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
