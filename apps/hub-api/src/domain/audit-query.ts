import { AppError } from '@svc/service-kit';
import type { Prisma } from '../generated/prisma/client';

/** Position of the last event of a page: events strictly after it in (created_at desc, id desc) order follow. */
export interface CursorPosition {
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
