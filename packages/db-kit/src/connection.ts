import type { ClientConfig } from 'pg';

/** The parts of a `postgres://` / `postgresql://` connection URL that the kit works with. */
export interface DatabaseUrlParts {
  protocol: 'postgres' | 'postgresql';
  /** Host name; empty when the URL relies on a `?host=` parameter (e.g. a Unix socket directory). */
  host: string;
  port: number;
  user: string;
  password: string | undefined;
  /** Database name, or undefined when the URL has no path (the server then defaults to the user name). */
  database: string | undefined;
  /** Prisma's `?schema=` parameter (the Postgres schema to use); undefined means `public`. */
  schema: string | undefined;
  /** Every query parameter, including `schema`. */
  params: Record<string, string>;
}

const DEFAULT_PORT = 5432;
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Never echo the input: it may carry a password.
    throw new Error('invalid database URL: expected postgres://user[:password]@host[:port]/database');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(
      `invalid database URL: protocol must be postgres: or postgresql:, got ${parsed.protocol}`,
    );
  }
  return parsed;
}

/** Parses a Postgres connection URL. Throws (without echoing the URL) when it is not one. */
export function parseDatabaseUrl(url: string): DatabaseUrlParts {
  const parsed = parseUrl(url);
  const params: Record<string, string> = {};
  for (const [key, value] of parsed.searchParams) params[key] = value;
  const rawDatabase = parsed.pathname.replace(/^\//, '');
  const schema = params['schema'];
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(
      `invalid database URL: schema parameter ${JSON.stringify(schema)} is not a plain identifier`,
    );
  }
  return {
    protocol: parsed.protocol === 'postgres:' ? 'postgres' : 'postgresql',
    host: parsed.hostname.replace(/^\[(.+)\]$/, '$1'),
    port: parsed.port === '' ? DEFAULT_PORT : Number(parsed.port),
    user: decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    database: rawDatabase === '' ? undefined : decodeURIComponent(rawDatabase),
    schema,
    params,
  };
}

/** Returns the same URL (server, credentials, parameters) pointing at database `dbName`. */
export function withDatabase(url: string, dbName: string): string {
  if (dbName === '') throw new Error('database name must not be empty');
  const parsed = parseUrl(url);
  parsed.pathname = `/${encodeURIComponent(dbName)}`;
  return parsed.toString();
}

/**
 * The maintenance URL for the server of `url`: same host and credentials, database `postgres`, without the
 * Prisma `schema` parameter. Used for CREATE/DROP DATABASE, which cannot run inside the target database.
 */
export function adminUrl(url: string): string {
  const parsed = new URL(withDatabase(url, 'postgres'));
  parsed.searchParams.delete('schema');
  return parsed.toString();
}

/**
 * A `pg` client configuration for `url`. node-postgres ignores Prisma's `?schema=` parameter, so it is turned
 * into `search_path` here; any `?options=` parameter is kept.
 */
export function clientConfig(url: string): ClientConfig {
  const parts = parseDatabaseUrl(url);
  const parsed = new URL(url);
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('options');
  const options = [
    parts.params['options'],
    parts.schema === undefined ? undefined : `-c search_path=${parts.schema}`,
  ]
    .filter((value): value is string => value !== undefined && value !== '')
    .join(' ');
  return options === ''
    ? { connectionString: parsed.toString() }
    : { connectionString: parsed.toString(), options };
}
