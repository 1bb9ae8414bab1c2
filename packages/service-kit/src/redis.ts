import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';

export { Redis };

/**
 * An ioredis connection suitable for BullMQ (workers need `maxRetriesPerRequest: null`) that keeps
 * reconnecting with a capped backoff, so a Redis restart does not take the service down.
 */
export function createRedis(url: string, options: RedisOptions & { name?: string } = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    connectionName: options.name,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    ...options,
  });
}

/**
 * Readiness check: PING must answer PONG. While the client is (re)connecting the PING waits, and the
 * readiness timeout decides; a client that was closed for good fails at once.
 */
export async function checkRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') throw new Error('redis connection is closed');
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected PING answer ${answer}`);
}

/**
 * ioredis options for a `redis://` or `rediss://` URL, for libraries that should open (and close) their
 * own connections, such as BullMQ queues and workers.
 */
export function redisConnectionOptions(url: string): ConnectionOptions {
  const parsed = new URL(url);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    db: Number.isInteger(db) ? db : 0,
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
    retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
  };
}
