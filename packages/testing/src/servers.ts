/**
 * The servers the tests run against: the machine's PostgreSQL and Redis unless `TEST_DATABASE_SERVER_URL` or
 * `TEST_REDIS_URL` name others. The one place tests read these variables.
 */
const DEFAULT_DATABASE_SERVER_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

function fromEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Any URL on the test PostgreSQL server (its `postgres` database by default). */
export function testDatabaseServerUrl(): string {
  return fromEnv('TEST_DATABASE_SERVER_URL') ?? DEFAULT_DATABASE_SERVER_URL;
}

/** The test Redis; `db` selects a logical database (`redis://…/7`) for a suite that must not share keys. */
export function testRedisUrl(db?: number): string {
  const base = (fromEnv('TEST_REDIS_URL') ?? DEFAULT_REDIS_URL).replace(/\/+$/, '');
  if (db === undefined) return base;
  if (!Number.isInteger(db) || db < 0)
    throw new TypeError(`a Redis database index is a whole number, not ${db}`);
  return `${base.replace(/\/\d+$/, '')}/${db}`;
}
