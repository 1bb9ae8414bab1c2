import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from 'pg';
import { createPool } from './pool';

export interface PrismaDatabase<Client> {
  prisma: Client;
  /** The pool Prisma runs on; readiness checks use it too. */
  pool: Pool;
  close(): Promise<void>;
}

/**
 * A service's Prisma client on one pg pool through the driver adapter. Each service passes its own
 * generated client class, so nothing here knows any schema.
 */
export function createPrismaDatabase<Client extends { $disconnect(): Promise<void> }>(
  PrismaClient: new (options: { adapter: PrismaPg }) => Client,
  url: string,
  options: { poolSize?: number; applicationName: string },
): PrismaDatabase<Client> {
  const pool = createPool(url, {
    max: options.poolSize ?? 10,
    applicationName: options.applicationName,
    connectionTimeoutMillis: 3000,
    // Services' queries are short; none may hang a request or a job forever on a half-dead connection.
    queryTimeoutMillis: 15_000,
  });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closed: Promise<void> | undefined;
  return {
    prisma,
    pool,
    close() {
      closed ??= (async () => {
        await prisma.$disconnect();
        await pool.end().catch(() => undefined);
      })();
      return closed;
    },
  };
}

/** True for a unique-constraint violation (Prisma P2002), optionally naming a column of the constraint. */
export function isUniqueViolation(error: unknown, column?: string): boolean {
  const e = error as {
    code?: string;
    meta?: { target?: unknown; driverAdapterError?: { cause?: { constraint?: { fields?: string[] } } } };
  };
  if (e?.code !== 'P2002') return false;
  if (!column) return true;
  const target = e.meta?.target;
  const fields = e.meta?.driverAdapterError?.cause?.constraint?.fields ?? [];
  return (
    (Array.isArray(target) ? target.includes(column) : String(target ?? '').includes(column)) ||
    fields.some((field) => field.includes(column))
  );
}
