import type { Pool, PoolClient } from 'pg';
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

/** One SQL statement; a named one is parsed and planned once per pooled connection (its text must not change). */
export interface Statement {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * Where a data function's SQL runs: a pooled connection inside the caller's transaction (the engine's reconcile,
 * the hot paths), the pool itself for a read, or, for a caller that holds one, Prisma's client or interactive
 * transaction ({@link sqlOfPrisma}). Statements name their columns as the model's fields and cast what they
 * compare, so every kind answers the same rows (they count with `::int`: no `bigint` comes back).
 */
export interface Sql {
  rows<Row>(statement: Statement): Promise<Row[]>;
}

/** {@link Sql} on a pg pool or one of its connections. */
export function sqlOn(client: Pick<PoolClient, 'query'> | Pick<Pool, 'query'>): Sql {
  return {
    async rows<Row>(statement: Statement): Promise<Row[]> {
      return (await (client as Pick<Pool, 'query'>).query(statement)).rows as Row[];
    },
  };
}

/** {@link Sql} on a Prisma client or interactive transaction (names are not used: Prisma sends the text). */
export function sqlOfPrisma(tx: Pick<DbTx, '$queryRawUnsafe'>): Sql {
  return {
    rows<Row>(statement: Statement): Promise<Row[]> {
      return tx.$queryRawUnsafe<Row[]>(statement.text, ...(statement.values ?? []));
    },
  };
}
