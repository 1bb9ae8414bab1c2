import { Redis } from 'ioredis';
import { Client } from 'pg';

export class PreflightError extends Error {}

function where(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol.startsWith('redis') ? '6379' : '5432')}`;
}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e?.code ?? e?.message?.split('\n')[0] ?? 'unknown error';
}

/** Fails with one line naming the server and how to start it. */
export async function checkPostgres(serverUrl: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new PreflightError(
      `PostgreSQL is not reachable at ${where(serverUrl)} (${reason(error)}). Start it (e.g. \`pg_ctlcluster 15 main start\` or \`sudo systemctl start postgresql\`) or set DATABASE_URL to a server URL.`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function checkRedisServer(url: string): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new PreflightError(
      `Redis is not reachable at ${where(url)} (${reason(error)}). Start it (e.g. \`redis-server --daemonize yes\` or \`sudo systemctl start redis-server\`) or set REDIS_URL.`,
    );
  } finally {
    redis.disconnect();
  }
}
