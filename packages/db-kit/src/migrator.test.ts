import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
// @svc/testing depends on this package, so its test servers are read from its source, not through a dependency.
import { testDatabaseServerUrl } from '../../testing/src/servers';
import { withDatabase } from './connection';
import { dropDatabase, ensureDatabase } from './databases';
import {
  MIGRATION_ADVISORY_LOCK_KEY,
  MigrationError,
  checksumMatches,
  listMigrations,
  migrate,
  migrationChecksum,
} from './migrator';

jest.setTimeout(30_000);

const SERVER = testDatabaseServerUrl();
const databases: string[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const name of databases) await dropDatabase(SERVER, name, { force: true });
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function freshDatabase(): Promise<string> {
  const name = `dbkit_mig_${randomBytes(5).toString('hex')}`;
  databases.push(name);
  await ensureDatabase(SERVER, name);
  return withDatabase(SERVER, name);
}

/** Writes a Prisma-layout migrations folder (with migration_lock.toml) and returns its path. */
async function migrationsDir(migrations: Record<string, string>, provider = 'postgresql'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'db-kit-migrations-'));
  dirs.push(dir);
  await writeFile(join(dir, 'migration_lock.toml'), `provider = "${provider}"\n`);
  for (const [name, sql] of Object.entries(migrations)) await writeMigration(dir, name, sql);
  return dir;
}

async function writeMigration(dir: string, name: string, sql: string): Promise<void> {
  await mkdir(join(dir, name), { recursive: true });
  await writeFile(join(dir, name, 'migration.sql'), sql);
}

async function query<T extends object>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function migrationError(promise: Promise<unknown>): Promise<MigrationError> {
  const err = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(err).toBeInstanceOf(MigrationError);
  return err as MigrationError;
}

const INIT = 'CREATE TABLE "Account" (id TEXT PRIMARY KEY, email TEXT NOT NULL);\n';
const SECOND = 'ALTER TABLE "Account" ADD COLUMN name TEXT;\nCREATE TABLE "Project" (id TEXT PRIMARY KEY);\n';

describe('listMigrations', () => {
  it('when listing, then folders are sorted by name, top-level files ignored and checksums are SHA-256 hex', async () => {
    const dir = await migrationsDir({ '20250102000000_second': SECOND, '20250101000000_init': INIT });

    const migrations = await listMigrations(dir);

    expect(migrations.map((m) => m.name)).toEqual(['20250101000000_init', '20250102000000_second']);
    expect(migrations[0]).toEqual({
      name: '20250101000000_init',
      path: join(dir, '20250101000000_init', 'migration.sql'),
      sql: INIT,
      checksum: createHash('sha256').update(INIT).digest('hex'),
    });
  });

  it('when a folder has no migration.sql, then it fails naming the folder', async () => {
    const dir = await migrationsDir({ '20250101000000_init': INIT });
    await mkdir(join(dir, '20250102000000_empty'));

    const err = await migrationError(listMigrations(dir));

    expect(err.code).toBe('INVALID_MIGRATIONS_DIR');
    expect(err.message).toContain('20250102000000_empty');
  });

  it('when the directory does not exist, then it fails clearly', async () => {
    const err = await migrationError(
      listMigrations(join(tmpdir(), `missing-${randomBytes(4).toString('hex')}`)),
    );
    expect(err.message).toMatch(/does not exist/);
  });
});

describe('checksums', () => {
  it("when hashing, then the result matches Prisma's rendering (64 lower-case hex characters)", () => {
    expect(migrationChecksum('hello')).toBe(
      '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    );
  });

  it('when only line endings differ, then the checksum still matches, as in Prisma', () => {
    const lf = 'ab\ncd\n';
    const crlf = 'ab\r\ncd\r\n';
    expect(checksumMatches(crlf, migrationChecksum(lf))).toBe(true);
    expect(checksumMatches(lf, migrationChecksum(crlf))).toBe(true);
    expect(checksumMatches('ab\ncd', migrationChecksum(lf))).toBe(false);
  });

  it('when the stored checksum uses the old unpadded format, then it still matches', () => {
    const script = 'abcd';
    const unpadded = [...createHash('sha256').update(script).digest()].map((b) => b.toString(16)).join('');
    expect(unpadded.length).toBeLessThan(64);
    expect(checksumMatches(script, unpadded)).toBe(true);
  });
});

describe('migrate', () => {
  it('when migrations are pending, then they are applied in folder order and reported', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250102000000_second': SECOND, '20250101000000_init': INIT });
    const messages: string[] = [];

    const result = await migrate({ databaseUrl: url, migrationsDir: dir, log: (msg) => messages.push(msg) });

    expect(result).toEqual({ applied: ['20250101000000_init', '20250102000000_second'], alreadyApplied: [] });
    const columns = await query<{ column_name: string }>(
      url,
      `select column_name from information_schema.columns where table_name = 'Account' order by ordinal_position`,
    );
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'email', 'name']);
    expect(messages).toContain('applied migration');
  });

  it('when run again, then nothing is applied and every migration is reported as already applied', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_init': INIT, '20250102000000_second': SECOND });
    await migrate({ databaseUrl: url, migrationsDir: dir });

    const again = await migrate({ databaseUrl: url, migrationsDir: dir });

    expect(again).toEqual({ applied: [], alreadyApplied: ['20250101000000_init', '20250102000000_second'] });
    expect(await query(url, 'select * from _prisma_migrations')).toHaveLength(2);
  });

  it("when a migration is applied, then _prisma_migrations has Prisma's exact shape and a finished row", async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_init': INIT });

    await migrate({ databaseUrl: url, migrationsDir: dir });

    const shape = await query(
      url,
      `select column_name, data_type, character_maximum_length as length, is_nullable, column_default
         from information_schema.columns where table_name = '_prisma_migrations' order by ordinal_position`,
    );
    expect(shape).toEqual([
      {
        column_name: 'id',
        data_type: 'character varying',
        length: 36,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'checksum',
        data_type: 'character varying',
        length: 64,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'finished_at',
        data_type: 'timestamp with time zone',
        length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'migration_name',
        data_type: 'character varying',
        length: 255,
        is_nullable: 'NO',
        column_default: null,
      },
      { column_name: 'logs', data_type: 'text', length: null, is_nullable: 'YES', column_default: null },
      {
        column_name: 'rolled_back_at',
        data_type: 'timestamp with time zone',
        length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'started_at',
        data_type: 'timestamp with time zone',
        length: null,
        is_nullable: 'NO',
        column_default: 'now()',
      },
      {
        column_name: 'applied_steps_count',
        data_type: 'integer',
        length: null,
        is_nullable: 'NO',
        column_default: '0',
      },
    ]);
    const primaryKey = await query<{ column_name: string }>(
      url,
      `select k.column_name from information_schema.table_constraints c
         join information_schema.key_column_usage k on k.constraint_name = c.constraint_name
        where c.table_name = '_prisma_migrations' and c.constraint_type = 'PRIMARY KEY'`,
    );
    expect(primaryKey).toEqual([{ column_name: 'id' }]);

    const [row] = await query<Record<string, unknown>>(url, 'select * from _prisma_migrations');
    expect(row).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      checksum: createHash('sha256').update(INIT).digest('hex'),
      finished_at: expect.any(Date),
      migration_name: '20250101000000_init',
      logs: null,
      rolled_back_at: null,
      started_at: expect.any(Date),
      applied_steps_count: 1,
    });
    expect((row?.['finished_at'] as Date).getTime()).toBeGreaterThanOrEqual(
      (row?.['started_at'] as Date).getTime(),
    );
  });

  it('when three migrate calls run at once, then each migration is applied exactly once', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({
      '20250101000000_init': `${INIT}SELECT pg_sleep(0.2);\n`,
      '20250102000000_second': SECOND,
      '20250103000000_third': 'CREATE TABLE "Run" (id TEXT PRIMARY KEY);\n',
    });

    const results = await Promise.all([1, 2, 3].map(() => migrate({ databaseUrl: url, migrationsDir: dir })));

    expect(results.flatMap((r) => r.applied).sort()).toEqual([
      '20250101000000_init',
      '20250102000000_second',
      '20250103000000_third',
    ]);
    expect(results.filter((r) => r.applied.length === 3)).toHaveLength(1);
    const rows = await query<{ migration_name: string }>(
      url,
      'select migration_name from _prisma_migrations',
    );
    expect(rows).toHaveLength(3);
  });

  it('when a migration fails, then its SQL is rolled back, the failure is recorded and the error names it', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({
      '20250101000000_init': INIT,
      '20250102000000_broken': 'CREATE TABLE "Half" (id TEXT);\nSELECT 1/0;\n',
      '20250103000000_after': 'CREATE TABLE "After" (id TEXT);\n',
    });

    const err = await migrationError(migrate({ databaseUrl: url, migrationsDir: dir }));

    expect(err.code).toBe('MIGRATION_FAILED');
    expect(err.migrationNames).toEqual(['20250102000000_broken']);
    expect(err.message).toContain('20250102000000_broken');
    expect(err.message).toContain('division by zero');
    const tables = await query<{ table_name: string }>(
      url,
      `select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(['Account', '_prisma_migrations']);
    const rows = await query(
      url,
      'select migration_name, finished_at, applied_steps_count, rolled_back_at from _prisma_migrations order by started_at',
    );
    expect(rows).toEqual([
      {
        migration_name: '20250101000000_init',
        finished_at: expect.any(Date),
        applied_steps_count: 1,
        rolled_back_at: null,
      },
      {
        migration_name: '20250102000000_broken',
        finished_at: null,
        applied_steps_count: 0,
        rolled_back_at: null,
      },
    ]);
    const [failed] = await query<{ logs: string }>(
      url,
      "select logs from _prisma_migrations where migration_name = '20250102000000_broken'",
    );
    expect(failed?.logs).toMatch(/division by zero \(SQLSTATE 22012\)/);
  });

  it('when a failed migration is recorded, then later runs are refused until it is marked rolled back', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_broken': 'SELECT 1/0;\n' });
    await migrationError(migrate({ databaseUrl: url, migrationsDir: dir }));
    await writeMigration(dir, '20250101000000_broken', INIT);

    const blocked = await migrationError(migrate({ databaseUrl: url, migrationsDir: dir }));

    expect(blocked.code).toBe('FAILED_MIGRATION_IN_DATABASE');
    expect(blocked.migrationNames).toEqual(['20250101000000_broken']);
    expect(blocked.message).toMatch(
      /`20250101000000_broken` migration started at .* failed with the following logs/,
    );
    expect(blocked.message).toContain('prisma migrate resolve');

    await query(url, 'update _prisma_migrations set rolled_back_at = now()');
    const retried = await migrate({ databaseUrl: url, migrationsDir: dir });
    expect(retried.applied).toEqual(['20250101000000_broken']);
  });

  it('when an applied migration file was edited, then the run fails with a checksum mismatch and applies nothing', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_init': INIT });
    await migrate({ databaseUrl: url, migrationsDir: dir });
    await writeMigration(dir, '20250101000000_init', `${INIT}-- edited\n`);
    await writeMigration(dir, '20250102000000_second', SECOND);

    const err = await migrationError(migrate({ databaseUrl: url, migrationsDir: dir }));

    expect(err.code).toBe('CHECKSUM_MISMATCH');
    expect(err.migrationNames).toEqual(['20250101000000_init']);
    expect(err.message).toMatch(/immutable.*add a new migration/);
    expect(await query(url, 'select * from _prisma_migrations')).toHaveLength(1);
  });

  it('when an applied migration only changed its line endings, then it still counts as applied', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_init': `${INIT}${SECOND}` });
    await migrate({ databaseUrl: url, migrationsDir: dir });
    await writeMigration(dir, '20250101000000_init', `${INIT}${SECOND}`.replace(/\n/g, '\r\n'));

    const result = await migrate({ databaseUrl: url, migrationsDir: dir });

    expect(result).toEqual({ applied: [], alreadyApplied: ['20250101000000_init'] });
  });

  it('when the database has applied migrations missing on disk, then a warning is logged and the run continues', async () => {
    const url = await freshDatabase();
    await migrate({ databaseUrl: url, migrationsDir: await migrationsDir({ '20250101000000_init': INIT }) });
    const logs: { msg: string; fields?: object }[] = [];

    const result = await migrate({
      databaseUrl: url,
      migrationsDir: await migrationsDir({ '20250102000000_second': SECOND }),
      log: (msg, fields) => logs.push({ msg, fields }),
    });

    expect(result).toEqual({ applied: ['20250102000000_second'], alreadyApplied: [] });
    expect(logs).toContainEqual({
      msg: 'applied migrations are missing from the migrations directory',
      fields: expect.objectContaining({ migrations: ['20250101000000_init'] }),
    });
  });

  it('when another session holds the migration lock, then migrate gives up after lockTimeoutMs', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_init': INIT });
    const holder = new Client({ connectionString: url });
    await holder.connect();
    await holder.query('select pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
    try {
      const err = await migrationError(migrate({ databaseUrl: url, migrationsDir: dir, lockTimeoutMs: 200 }));
      expect(err.code).toBe('LOCK_TIMEOUT');
    } finally {
      await holder.end();
    }
    expect((await migrate({ databaseUrl: url, migrationsDir: dir })).applied).toEqual([
      '20250101000000_init',
    ]);
  });

  it('when the URL names a schema, then the bookkeeping table and the migrated tables live in that schema', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_init': INIT });

    await migrate({ databaseUrl: `${url}?schema=hub`, migrationsDir: dir });

    const tables = await query<{ table_schema: string; table_name: string }>(
      url,
      `select table_schema, table_name from information_schema.tables
        where table_schema not in ('pg_catalog', 'information_schema') order by table_name`,
    );
    expect(tables).toEqual([
      { table_schema: 'hub', table_name: 'Account' },
      { table_schema: 'hub', table_name: '_prisma_migrations' },
    ]);
  });

  it('when migration_lock.toml names another provider, then migrate refuses to run', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '20250101000000_init': INIT }, 'mysql');

    const err = await migrationError(migrate({ databaseUrl: url, migrationsDir: dir }));

    expect(err.code).toBe('PROVIDER_MISMATCH');
    expect(await query(url, "select 1 from pg_tables where tablename = '_prisma_migrations'")).toHaveLength(
      0,
    );
  });
});
