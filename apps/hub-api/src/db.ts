import { createPrismaDatabase } from '@svc/db-kit';
import type { PrismaDatabase } from '@svc/db-kit';
import { PrismaClient } from './generated/prisma/client';

export { isUniqueViolation } from '@svc/db-kit';

export type Db = PrismaClient;
export type Database = PrismaDatabase<PrismaClient>;

export function createDatabase(url: string, options: { poolSize?: number } = {}): Database {
  return createPrismaDatabase(PrismaClient, url, { poolSize: options.poolSize, applicationName: 'hub-api' });
}
