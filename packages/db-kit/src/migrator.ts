import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from 'pg';
import { adminUrl, clientConfig, parseDatabaseUrl } from './connection';
import { ensureDatabase, quoteIdentifier } from './databases';
import { PgErrorCodes, pgErrorCode } from './errors';

/**
 * Key of the advisory lock held while migrating. It is the key Prisma Migrate uses, so this migrator and
 * `prisma migrate deploy` never run against the same database at the same time.
 */
export const MIGRATION_ADVISORY_LOCK_KEY = 72707369;

/** Prisma's bookkeeping table, created exactly as Prisma's schema engine creates it on PostgreSQL. */
export const PRISMA_MIGRATIONS_TABLE = '_prisma_migrations';

const CREATE_MIGRATIONS_TABLE_SQL = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`;

const MIGRATION_SCRIPT = 'migration.sql';
const MIGRATION_LOCK_FILE = 'migration_lock.toml';

/** One `<migrationsDir>/<name>/migration.sql`. */
export interface MigrationFile {
  /** Folder name, e.g. `20250101120000_init`; stored as `migration_name`. */
  name: string;
  /** Absolute or relative path of the migration.sql file. */
  path: string;
  sql: string;
  /** SHA-256 hex of the file content, as Prisma stores it in `checksum`. */
  checksum: string;
}

export type MigrationErrorCode =
  | 'INVALID_MIGRATIONS_DIR'
  | 'PROVIDER_MISMATCH'
  | 'LOCK_TIMEOUT'
  | 'FAILED_MIGRATION_IN_DATABASE'
  | 'CHECKSUM_MISMATCH'
  | 'MIGRATION_FAILED';

/** Every failure of {@link migrate} and {@link listMigrations}; `migrationNames` lists the migrations concerned. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';

  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    readonly migrationNames: string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The checksum Prisma stores for a migration script: SHA-256 of the file content, lower-case hex (64 chars).
 * Prisma hashes the content as read, without normalising line endings.
 */
export function migrationChecksum(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Prisma's pre-2021 format: bytes rendered as hex without zero padding (prisma-engines#1887). */
function unpaddedChecksum(content: string): string {
  return [...createHash('sha256').update(content).digest()].map((byte) => byte.toString(16)).join('');
}

/**
 * Whether `content` matches a stored checksum the way Prisma decides it: the script as is, with CRLF turned into
 * LF, or with LF turned into CRLF (git may rewrite line endings on checkout); and, for stored values that are not
 * 64 characters long, in the old unpadded hex format.
 */
export function checksumMatches(content: string, storedChecksum: string): boolean {
  const render = storedChecksum.length === 64 ? migrationChecksum : unpaddedChecksum;
  const variants = [content, content.replace(/\r\n/g, '\n'), content.replace(/\n/g, '\r\n')];
  return variants.some((variant) => render(variant) === storedChecksum);
}

function isMissing(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ENOENT';
}

/**
 * Lists the migrations in `migrationsDir` in the order they apply (folder names sorted by code point, as Prisma
 * does). Files at the top level (such as migration_lock.toml) are ignored; a folder without migration.sql is an
 * error.
 */
export async function listMigrations(migrationsDir: string): Promise<MigrationFile[]> {
  let entries;
  try {
    entries = await readdir(migrationsDir, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) {
      throw new MigrationError(
        'INVALID_MIGRATIONS_DIR',
        `migrations directory ${migrationsDir} does not exist`,
      );
    }
    throw err;
  }
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Promise.all(
    names.map(async (name) => {
      const path = join(migrationsDir, name, MIGRATION_SCRIPT);
      let content: Buffer;
      try {
        content = await readFile(path);
      } catch (err) {
        if (isMissing(err)) {
          throw new MigrationError(
            'INVALID_MIGRATIONS_DIR',
            `migration folder ${name} has no ${MIGRATION_SCRIPT} (${path})`,
            [name],
          );
        }
        throw err;
      }
      return { name, path, sql: content.toString('utf8'), checksum: migrationChecksum(content) };
    }),
  );
}

/** Throws when migration_lock.toml exists and names another provider than postgresql (Prisma's P3019). */
async function assertProvider(migrationsDir: string): Promise<void> {
  let lockfile: string;
  try {
    lockfile = await readFile(join(migrationsDir, MIGRATION_LOCK_FILE), 'utf8');
  } catch (err) {
    if (isMissing(err)) return;
    throw err;
  }
  const line = lockfile.split(/\r?\n/).find((candidate) => candidate.trim().startsWith('provider'));
  const provider = line
    ?.replace(/^\s*provider\s*=\s*/, '')
    .trim()
    .replace(/^"|"$/g, '');
  if (provider !== 'postgresql') {
    throw new MigrationError(
      'PROVIDER_MISMATCH',
      `${join(migrationsDir, MIGRATION_LOCK_FILE)} names provider ${JSON.stringify(provider ?? null)}, expected "postgresql"`,
    );
  }
}

interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
}

export type MigrateLog = (msg: string, fields?: object) => void;

export interface MigrateOptions {
  databaseUrl: string;
  migrationsDir: string;
  /** Progress and warnings; silent when omitted. */
  log?: MigrateLog;
  /** How long to wait for another migrator holding the lock before failing (default 60 s). */
  lockTimeoutMs?: number;
}

export interface MigrateResult {
  /** Migrations applied by this call, in order. */
  applied: string[];
  /** Migrations on disk that were already applied before this call. */
  alreadyApplied: string[];
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = pgErrorCode(err);
  const fields = err as Error & { detail?: unknown; hint?: unknown; position?: unknown };
  return [
    code === undefined ? err.message : `${err.message} (SQLSTATE ${code})`,
    typeof fields.detail === 'string' ? `DETAIL: ${fields.detail}` : undefined,
    typeof fields.hint === 'string' ? `HINT: ${fields.hint}` : undefined,
    typeof fields.position === 'string' ? `POSITION: ${fields.position}` : undefined,
  ]
    .filter((line): line is string => line !== undefined)
    .join('\n');
}

async function acquireLock(client: Client, timeoutMs: number): Promise<void> {
  await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
  } catch (err) {
    if (pgErrorCode(err) === PgErrorCodes.lockNotAvailable) {
      throw new MigrationError(
        'LOCK_TIMEOUT',
        `another migration run holds the migration lock (advisory lock ${MIGRATION_ADVISORY_LOCK_KEY}); gave up after ${timeoutMs} ms`,
        [],
        { cause: err },
      );
    }
    throw err;
  } finally {
    await client.query('SET lock_timeout = 0');
  }
}

/** Like Prisma, work in the URL's schema (default public): create it if needed and make it the search_path. */
async function ensureMigrationsTable(client: Client, schema: string): Promise<void> {
  if (schema !== 'public') await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
  await client.query(`SET search_path TO ${quoteIdentifier(schema)}`);
  const found = await client.query(
    `select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relname = $2 and c.relkind = 'r'`,
    [schema, PRISMA_MIGRATIONS_TABLE],
  );
  if (found.rowCount === 0) await client.query(CREATE_MIGRATIONS_TABLE_SQL);
}

function failedMigrationsMessage(failed: MigrationRow[]): string {
  const details = failed.map((row) => {
    const logs = row.logs?.trim();
    return `The \`${row.migration_name}\` migration started at ${row.started_at.toISOString()} failed${
      logs ? ` with the following logs:\n${logs}` : ''
    }`;
  });
  return [
    'Found failed migrations in the target database; new migrations will not be applied until they are resolved.',
    ...details,
    'Fix the database by hand, then mark each one with `prisma migrate resolve --rolled-back <name>` (to retry it) or ' +
      '`--applied <name>` (if you completed it manually), or set its rolled_back_at.',
  ].join('\n');
}

/**
 * Applies the pending migrations of `migrationsDir` to `databaseUrl`, keeping Prisma's `_prisma_migrations`
 * bookkeeping so that `prisma migrate deploy` can take over. Concurrent calls on the same database serialise on a
 * Postgres advisory lock. Each migration runs in a transaction together with the update that marks it finished;
 * a failure rolls the script back, stores the error in `logs` and throws {@link MigrationError}. Later runs refuse to
 * continue while such a failed row exists, as Prisma does (P3009).
 */
export async function migrate(opts: MigrateOptions): Promise<MigrateResult> {
  const log: MigrateLog = opts.log ?? (() => undefined);
  const schema = parseDatabaseUrl(opts.databaseUrl).schema ?? 'public';
  await assertProvider(opts.migrationsDir);
  const onDisk = await listMigrations(opts.migrationsDir);

  const client = new Client({ ...clientConfig(opts.databaseUrl), application_name: 'svc-db-kit-migrate' });
  await client.connect();
  let locked = false;
  try {
    await acquireLock(client, opts.lockTimeoutMs ?? 60_000);
    locked = true;
    await ensureMigrationsTable(client, schema);

    const rows = (
      await client.query<MigrationRow>(
        `select * from ${PRISMA_MIGRATIONS_TABLE} order by started_at, migration_name`,
      )
    ).rows;

    const failed = rows.filter((row) => row.finished_at === null && row.rolled_back_at === null);
    if (failed.length > 0) {
      throw new MigrationError(
        'FAILED_MIGRATION_IN_DATABASE',
        failedMigrationsMessage(failed),
        failed.map((row) => row.migration_name),
      );
    }

    const applied = rows.filter((row) => row.rolled_back_at === null);
    const diskByName = new Map(onDisk.map((migration) => [migration.name, migration]));
    const changed = applied.filter((row) => {
      const file = diskByName.get(row.migration_name);
      return file !== undefined && !checksumMatches(file.sql, row.checksum);
    });
    if (changed.length > 0) {
      const names = changed.map((row) => row.migration_name);
      throw new MigrationError(
        'CHECKSUM_MISMATCH',
        `checksum mismatch: ${names.map((name) => `\`${name}\``).join(', ')} changed after it was applied. ` +
          'Migrations are immutable; restore the applied file and add a new migration instead.',
        names,
      );
    }
    const missing = [...new Set(applied.map((row) => row.migration_name))].filter(
      (name) => !diskByName.has(name),
    );
    if (missing.length > 0) {
      log('applied migrations are missing from the migrations directory', {
        migrations: missing,
        migrationsDir: opts.migrationsDir,
      });
    }

    const appliedNames = new Set(applied.map((row) => row.migration_name));
    const alreadyApplied = onDisk.filter((m) => appliedNames.has(m.name)).map((m) => m.name);
    const pending = onDisk.filter((m) => !appliedNames.has(m.name));
    if (pending.length === 0) log('database is up to date', { migrations: alreadyApplied.length });

    const newlyApplied: string[] = [];
    for (const migration of pending) {
      await applyOne(client, migration, log);
      newlyApplied.push(migration.name);
    }
    return { applied: newlyApplied, alreadyApplied };
  } finally {
    try {
      if (locked) await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
    } finally {
      await client.end();
    }
  }
}

async function applyOne(client: Client, migration: MigrationFile, log: MigrateLog): Promise<void> {
  const started = Date.now();
  const id = randomUUID();
  // Recorded outside the migration's transaction, so a failure stays visible (as with Prisma).
  await client.query(
    `insert into ${PRISMA_MIGRATIONS_TABLE} (id, checksum, migration_name, started_at) values ($1, $2, $3, now())`,
    [id, migration.checksum, migration.name],
  );
  log('applying migration', { migration: migration.name });
  try {
    await client.query('BEGIN');
    // No parameters: node-postgres uses the simple query protocol, which accepts a multi-statement script.
    await client.query(migration.sql);
    await client.query(
      `update ${PRISMA_MIGRATIONS_TABLE}
          set finished_at = clock_timestamp(), applied_steps_count = applied_steps_count + 1
        where id = $1`,
      [id],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const logs = describeError(err);
    await client
      .query(`update ${PRISMA_MIGRATIONS_TABLE} set logs = $2 where id = $1`, [id, logs])
      .catch((logErr: unknown) =>
        log('could not record the failure in _prisma_migrations', { error: String(logErr) }),
      );
    log('migration failed', { migration: migration.name, error: logs });
    throw new MigrationError(
      'MIGRATION_FAILED',
      `migration \`${migration.name}\` failed and was rolled back: ${logs}`,
      [migration.name],
      { cause: err },
    );
  }
  log('applied migration', { migration: migration.name, durationMs: Date.now() - started });
}

/**
 * What a service's `migrate` entry does: create its database when missing, then apply pending migrations.
 */
export async function migrateDatabase(
  options: MigrateOptions,
): Promise<{ created: boolean; applied: string[]; alreadyApplied: string[] }> {
  const name = new URL(options.databaseUrl).pathname.slice(1);
  const created = await ensureDatabase(adminUrl(options.databaseUrl), name);
  const result = await migrate(options);
  return { created, ...result };
}
