import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';

const LABEL = /^[a-z][a-z0-9]{0,31}$/;

/**
 * A BullMQ key prefix nobody else uses: `<label><8 hex>`. Every test file and bench that touches queues takes
 * one, so parallel runs never share (or obliterate) each other's jobs.
 */
export function uniqueQueuePrefix(label: string): string {
  if (!LABEL.test(label))
    throw new Error(
      `queue prefix label ${JSON.stringify(label)}: use 1-32 of a-z and 0-9, starting with a letter`,
    );
  return `${label}${randomBytes(4).toString('hex')}`;
}

/** ioredis options of a `redis://` or `rediss://` URL (BullMQ takes options, not a URL). */
export function redisConnectionOptions(url: string): ConnectionOptions & { maxRetriesPerRequest: null } {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    db: Number(u.pathname.slice(1) || 0),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

/**
 * Removes the named queues under `prefix` with BullMQ's `obliterate` (jobs in any state), then every key of
 * the prefix that is left (e.g. of queues a process opened but nobody named here).
 */
export async function obliterateQueues(redisUrl: string, prefix: string, names: string[]): Promise<void> {
  const connection = redisConnectionOptions(redisUrl);
  for (const name of names) {
    const queue = new Queue(name, { connection, prefix });
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
