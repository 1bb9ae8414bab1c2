import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import type { AuditEvent, Prisma } from '../generated/prisma/client';

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

/** Position of the last event of a page: events strictly after it in (created_at desc, id desc) order follow. */
interface CursorPosition {
  createdAt: Date;
  id: string;
}

const CURSOR_VERSION = 1;

const invalidCursor = () =>
  new AppError({
    status: 400,
    code: 'invalid_cursor',
    detail: 'The cursor is not one this API issued; start again without a cursor.',
  });

export function encodeAuditCursor(position: CursorPosition): string {
  return Buffer.from(
    JSON.stringify([CURSOR_VERSION, position.createdAt.toISOString(), position.id]),
    'utf8',
  ).toString('base64url');
}

export function decodeAuditCursor(cursor: string): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== CURSOR_VERSION) throw invalidCursor();
  const [, at, id] = parsed as [number, unknown, unknown];
  if (typeof at !== 'string' || typeof id !== 'string' || !/^[a-z]+_[0-9A-Za-z]{1,64}$/.test(id)) {
    throw invalidCursor();
  }
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at) throw invalidCursor();
  return { createdAt, id };
}

/** LIKE-escapes a literal prefix (Prisma passes `startsWith` values to LIKE unescaped). */
function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `credential.*` and `credential.` match by prefix (`credential.`); `api_key*` by `api_key`; else exact. */
export function actionFilter(action: string): Prisma.AuditEventWhereInput {
  if (action.endsWith('*')) return { action: { startsWith: likePrefix(action.slice(0, -1)) } };
  if (action.endsWith('.')) return { action: { startsWith: likePrefix(action) } };
  return { action };
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
