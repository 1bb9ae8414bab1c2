import { createHash, randomBytes } from 'node:crypto';
import {
  PgErrorCodes,
  assertDatabaseName,
  dropDatabase,
  ensureDatabase,
  listMigrations,
  migrate,
  pgErrorCode,
  quoteIdentifier,
  withAdminClient,
  withDatabase,
} from '@svc/db-kit';
import { sleep } from './process';
import { testDatabaseServerUrl } from './servers';

/** `<prefix>_t_<10-digit unix seconds>_<8 hex>` must fit Postgres' 63-character identifiers. */
const MAX_PREFIX_LENGTH = 63 - '_t_'.length - 10 - '_'.length - 8;
const PREFIX_PATTERN = /^[a-z_][a-z0-9_]*$/;
const CLONE_ATTEMPTS = 40;

export interface CreateTestDatabaseOptions {
  /** Any URL on the test server; default `TEST_DATABASE_SERVER_URL` or postgresql://postgres@127.0.0.1:5432/postgres. */
  serverUrl?: string;
  /** Prisma-layout migrations folder of the service under test. */
  migrationsDir: string;
  /** Short lower-case name of the service, e.g. `hub`; database names start with it. */
  prefix: string;
}

export interface TestDatabase {
  /** Connection URL of the fresh database. */
  url: string;
  name: string;
  /** Force-drops the database (terminating open connections). Safe to call twice. */
  drop(): Promise<void>;
}

function assertPrefix(prefix: string): void {
  if (!PREFIX_PATTERN.test(prefix) || prefix.length > MAX_PREFIX_LENGTH) {
    throw new Error(
      `invalid test database prefix ${JSON.stringify(prefix)}: use 1-${MAX_PREFIX_LENGTH} characters of a-z, 0-9 and _, not starting with a digit`,
    );
  }
}

/** A signed 64-bit advisory lock key for `name`, as a decimal string. */
function lockKey(name: string): string {
  return createHash('sha256').update(`svc-testing:${name}`).digest().readBigInt64BE(0).toString();
}

/**
 * Makes sure the migrated template `name` exists. Builders across processes serialise on an advisory lock held on
 * the server's `postgres` database; IS_TEMPLATE is set last and marks a finished build, so a half-built leftover
 * of a killed run is dropped and rebuilt.
 */
async function ensureTemplate(serverUrl: string, name: string, migrationsDir: string): Promise<void> {
  await withAdminClient(serverUrl, async (client) => {
    const isReady = async () =>
      (await client.query('select 1 from pg_database where datname = $1 and datistemplate', [name]))
        .rowCount === 1;
    if (await isReady()) return;

    const key = lockKey(name);
    await client.query('select pg_advisory_lock($1::bigint)', [key]);
    try {
      if (await isReady()) return;
      await dropDatabase(serverUrl, name, { force: true });
      await ensureDatabase(serverUrl, name);
      try {
        await migrate({ databaseUrl: withDatabase(serverUrl, name), migrationsDir });
        await client.query(`ALTER DATABASE ${quoteIdentifier(name)} IS_TEMPLATE true`);
      } catch (err) {
        await dropDatabase(serverUrl, name, { force: true }).catch(() => undefined);
        throw err;
      }
    } finally {
      await client.query('select pg_advisory_unlock($1::bigint)', [key]);
    }
  });
}

/** `<prefix>_tpl_<first 10 hex of SHA-256 over every migration's name and checksum>`. */
export async function templateDatabaseName(prefix: string, migrationsDir: string): Promise<string> {
  assertPrefix(prefix);
  const hash = createHash('sha256');
  for (const migration of await listMigrations(migrationsDir))
    hash.update(`${migration.name}\n${migration.checksum}\n`);
  const name = `${prefix}_tpl_${hash.digest('hex').slice(0, 10)}`;
  assertDatabaseName(name);
  return name;
}

/**
 * A fresh, migrated database for one test file. The first call for a given migrations content builds a template
 * database (`<prefix>_tpl_<hash>`, migrated, marked IS_TEMPLATE), safely across jest workers; every call then
 * clones it with `CREATE DATABASE <prefix>_t_<unixSeconds>_<random> TEMPLATE <template>`.
 */
export async function createTestDatabase(opts: CreateTestDatabaseOptions): Promise<TestDatabase> {
  const serverUrl = opts.serverUrl ?? testDatabaseServerUrl();
  const template = await templateDatabaseName(opts.prefix, opts.migrationsDir);
  await ensureTemplate(serverUrl, template, opts.migrationsDir);

  const name = `${opts.prefix}_t_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  assertDatabaseName(name);
  for (let attempt = 1; ; attempt++) {
    try {
      await ensureDatabase(serverUrl, name, { template });
      break;
    } catch (err) {
      // 55006: "source database is being accessed by other users" — a connection to the template is closing.
      if (pgErrorCode(err) !== PgErrorCodes.objectInUse || attempt >= CLONE_ATTEMPTS) throw err;
      await sleep(Math.min(25 * attempt, 250));
    }
  }
  return {
    url: withDatabase(serverUrl, name),
    name,
    drop: () => dropDatabase(serverUrl, name, { force: true }),
  };
}

/**
 * Drops test databases `<prefix>_t_<unixSeconds>_<random>` created more than `olderThanMinutes` ago, e.g. left
 * behind by killed test runs. Templates are kept. Returns the dropped names.
 */
export async function dropStaleTestDatabases(
  serverUrl: string,
  prefix: string,
  olderThanMinutes: number,
): Promise<string[]> {
  assertPrefix(prefix);
  const pattern = new RegExp(`^${prefix}_t_(\\d{10})_[0-9a-f]{8}$`);
  const cutoff = Date.now() / 1000 - olderThanMinutes * 60;
  const names = await withAdminClient(serverUrl, async (client) => {
    const result = await client.query<{ datname: string }>(
      'select datname from pg_database order by datname',
    );
    return result.rows.map((row) => row.datname);
  });
  const stale = names.filter((name) => {
    const created = pattern.exec(name)?.[1];
    return created !== undefined && Number(created) < cutoff;
  });
  for (const name of stale) await dropDatabase(serverUrl, name, { force: true });
  return stale;
}
