export { adminUrl, clientConfig, parseDatabaseUrl, withDatabase } from './connection';
export type { DatabaseUrlParts } from './connection';
export {
  DATABASE_NAME_PATTERN,
  assertDatabaseName,
  databaseExists,
  dropDatabase,
  ensureDatabase,
  quoteIdentifier,
  withAdminClient,
} from './databases';
export type { DropDatabaseOptions, EnsureDatabaseOptions } from './databases';
export { PgErrorCodes, pgErrorCode } from './errors';
export {
  MIGRATION_ADVISORY_LOCK_KEY,
  MigrationError,
  PRISMA_MIGRATIONS_TABLE,
  checksumMatches,
  listMigrations,
  migrate,
  migrateDatabase,
  migrationChecksum,
} from './migrator';
export type {
  MigrateLog,
  MigrateOptions,
  MigrateResult,
  MigrationErrorCode,
  MigrationFile,
} from './migrator';
export { compareModels, normalizeType, readDatabaseColumns } from './drift';
export type { DatabaseColumn, DatabaseColumns, ExpectedModel } from './drift';
export { checkDatabase, createPool, poolCounts } from './pool';
export { inPooledTransaction } from './pooled-transaction';
export type { PoolCounts } from './pool';
export type { CheckDatabaseOptions, CreatePoolOptions } from './pool';
export * from './prisma-schema';
export * from './prisma';
