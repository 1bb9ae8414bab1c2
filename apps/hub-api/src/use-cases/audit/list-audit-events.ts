import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { actionFilter, decodeAuditCursor, encodeAuditCursor } from '../../domain/audit-query';
import type { AuditEvent, Prisma } from '../../generated/prisma/client';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 200;

export interface AuditEventFilters {
  /** Exact action, or a prefix ending in `.` or `*` (`credential.*`). */
  action?: string;
  actorKind?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  /** Inclusive lower bound on `created_at`. */
  since?: string;
  /** Exclusive upper bound on `created_at`. */
  until?: string;
  limit?: number;
  cursor?: string;
}

export interface AuditEventPage {
  events: AuditEvent[];
  nextCursor: string | null;
}

function parseInstant(value: string, name: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new AppError({
      status: 400,
      code: 'validation_failed',
      detail: `query/${name} is not a date-time`,
    });
  }
  return date;
}

/**
 * One page of a workspace's audit log, newest first. Keyset pagination on (created_at, id): a page never
 * repeats or skips an event, however many are appended meanwhile. Only the given workspace's events are
 * ever read; the filters narrow within it.
 */
export async function listAuditEvents(
  deps: HubDeps,
  workspaceId: string,
  filters: AuditEventFilters,
): Promise<AuditEventPage> {
  const limit = Math.min(Math.max(filters.limit ?? AUDIT_PAGE_DEFAULT, 1), AUDIT_PAGE_MAX);
  const since = filters.since === undefined ? undefined : parseInstant(filters.since, 'since');
  const until = filters.until === undefined ? undefined : parseInstant(filters.until, 'until');
  if (since && until && until < since) {
    throw new AppError({
      status: 400,
      code: 'invalid_time_range',
      detail: '`until` must not be before `since`.',
    });
  }
  const position = filters.cursor === undefined ? undefined : decodeAuditCursor(filters.cursor);

  const and: Prisma.AuditEventWhereInput[] = [{ workspaceId }];
  if (filters.action !== undefined) and.push(actionFilter(filters.action));
  if (filters.actorKind !== undefined) and.push({ actorKind: filters.actorKind });
  if (filters.actorId !== undefined) and.push({ actorId: filters.actorId });
  if (filters.targetType !== undefined) and.push({ targetType: filters.targetType });
  if (filters.targetId !== undefined) and.push({ targetId: filters.targetId });
  if (since || until) {
    and.push({ createdAt: { ...(since ? { gte: since } : {}), ...(until ? { lt: until } : {}) } });
  }
  if (position) {
    and.push({
      OR: [
        { createdAt: { lt: position.createdAt } },
        { createdAt: position.createdAt, id: { lt: position.id } },
      ],
    });
  }

  const rows = await deps.db.auditEvent.findMany({
    where: { AND: and },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
  });
  const events = rows.slice(0, limit);
  const last = events[events.length - 1];
  return {
    events,
    nextCursor: rows.length > limit && last ? encodeAuditCursor(last) : null,
  };
}
