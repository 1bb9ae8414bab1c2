import { createPrismaDatabase } from '@svc/db-kit';
import type { PrismaDatabase } from '@svc/db-kit';
import { PrismaClient } from './generated/prisma/client';

export type Db = PrismaClient;
export type Database = PrismaDatabase<PrismaClient>;

export function createDatabase(
  url: string,
  options: { poolSize?: number; applicationName?: string } = {},
): Database {
  return createPrismaDatabase(PrismaClient, url, {
    poolSize: options.poolSize,
    applicationName: options.applicationName ?? 'workflow-api',
  });
}

/** The client inside an interactive transaction. */
export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/** A Prisma client or the client of an interactive transaction. */
export type DbTx = Omit<Db, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;
