import { PrismaPg } from '@prisma/adapter-pg';
import { createPool } from '@svc/db-kit';
import type { Pool } from 'pg';
import { PrismaClient } from './generated/prisma/client';

export type Db = PrismaClient;

export interface Database {
  prisma: PrismaClient;
  pool: Pool;
  close(): Promise<void>;
}

/** One pg pool shared by Prisma (through the driver adapter) and readiness checks. */
export function createDatabase(url: string, options: { poolSize?: number } = {}): Database {
  const pool = createPool(url, {
    max: options.poolSize ?? 10,
    applicationName: 'hub-api',
    connectionTimeoutMillis: 3000,
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

/** True for a unique-constraint violation (Prisma P2002), optionally on a given column. */
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
    fields.some((f) => f.includes(column))
  );
}
