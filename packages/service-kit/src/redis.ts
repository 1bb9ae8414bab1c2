import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';

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

/** Readiness check: PING must answer PONG. A disconnected client fails fast instead of queueing. */
export async function checkRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') throw new Error(`redis connection is ${redis.status}`);
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected PING answer ${answer}`);
}
