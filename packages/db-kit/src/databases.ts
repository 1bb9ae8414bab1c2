import { Client } from 'pg';
import { adminUrl, clientConfig } from './connection';
import { PgErrorCodes, pgErrorCode } from './errors';

/** Database names the kit creates or drops: lower-case identifiers that never need case folding. */
export const DATABASE_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws unless `name` matches {@link DATABASE_NAME_PATTERN}. */
export function assertDatabaseName(name: string): void {
  if (!DATABASE_NAME_PATTERN.test(name)) {
    throw new Error(
      `invalid database name ${JSON.stringify(name)}: use 1-63 characters of a-z, 0-9 and _, not starting with a digit`,
    );
  }
}

/** Quotes an SQL identifier: `my"db` becomes `"my""db"`. */
export function quoteIdentifier(name: string): string {
  if (name.includes('\u0000')) throw new Error('identifier must not contain NUL characters');
  return `"${name.replace(/"/g, '""')}"`;
}

/** Runs `fn` with a client connected to the server's `postgres` database, closing it afterwards. */
export async function withAdminClient<T>(serverUrl: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ ...clientConfig(adminUrl(serverUrl)), application_name: 'svc-db-kit' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function existsWith(client: Client, name: string): Promise<boolean> {
  const result = await client.query('select 1 from pg_database where datname = $1', [name]);
  return result.rowCount === 1;
}

/** Whether database `name` exists on the server of `serverUrl` (any database URL on that server). */
export async function databaseExists(serverUrl: string, name: string): Promise<boolean> {
  assertDatabaseName(name);
  return withAdminClient(serverUrl, (client) => existsWith(client, name));
}

export interface EnsureDatabaseOptions {
  /** Clone this database (`CREATE DATABASE … TEMPLATE …`) instead of `template1`. */
  template?: string;
}

/**
 * Creates database `name` unless it exists. Returns true when this call created it. Safe when several processes
 * race: the loser's duplicate_database (42P04) or unique_violation (23505 on pg_database) is treated as "exists".
 * Cloning a template that has open connections fails with 55006 (object_in_use); that error is passed on.
 */
export async function ensureDatabase(
  serverUrl: string,
  name: string,
  opts: EnsureDatabaseOptions = {},
): Promise<boolean> {
  assertDatabaseName(name);
  if (opts.template !== undefined) assertDatabaseName(opts.template);
  return withAdminClient(serverUrl, async (client) => {
    if (await existsWith(client, name)) return false;
    const template = opts.template === undefined ? '' : ` TEMPLATE ${quoteIdentifier(opts.template)}`;
    try {
      await client.query(`CREATE DATABASE ${quoteIdentifier(name)}${template}`);
      return true;
    } catch (err) {
      const code = pgErrorCode(err);
      if (code === PgErrorCodes.duplicateDatabase || code === PgErrorCodes.uniqueViolation) return false;
      throw err;
    }
  });
}

export interface DropDatabaseOptions {
  /** Terminate other sessions connected to the database first (`DROP DATABASE … WITH (FORCE)`). */
  force?: boolean;
}

/**
 * Drops database `name` if it exists. A database marked IS_TEMPLATE is unmarked first (Postgres refuses to drop
 * templates). With `force`, open sessions are terminated.
 */
export async function dropDatabase(
  serverUrl: string,
  name: string,
  opts: DropDatabaseOptions = {},
): Promise<void> {
  assertDatabaseName(name);
  await withAdminClient(serverUrl, async (client) => {
    const result = await client.query<{ datistemplate: boolean }>(
      'select datistemplate from pg_database where datname = $1',
      [name],
    );
    const row = result.rows[0];
    if (row === undefined) return;
    if (row.datistemplate) {
      try {
        await client.query(`ALTER DATABASE ${quoteIdentifier(name)} IS_TEMPLATE false`);
      } catch (err) {
        // Someone else dropped it meanwhile.
        if (pgErrorCode(err) === PgErrorCodes.invalidCatalogName) return;
        throw err;
      }
    }
    await client.query(
      `DROP DATABASE IF EXISTS ${quoteIdentifier(name)}${opts.force === true ? ' WITH (FORCE)' : ''}`,
    );
  });
}
