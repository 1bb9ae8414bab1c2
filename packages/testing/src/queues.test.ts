import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { obliterateQueues, redisConnectionOptions, uniqueQueuePrefix } from './queues';
import { testRedisUrl } from './servers';

const REDIS_URL = testRedisUrl();

describe('uniqueQueuePrefix', () => {
  test('when asked twice with one label, then both start with it and differ', () => {
    const a = uniqueQueuePrefix('svct');
    const b = uniqueQueuePrefix('svct');
    expect(a).toMatch(/^svct[0-9a-f]{8}$/);
    expect(b).toMatch(/^svct[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
  });

  test('when the label could clash with key separators or is empty, then it is refused', () => {
    expect(() => uniqueQueuePrefix('a:b')).toThrow(/queue prefix label/);
    expect(() => uniqueQueuePrefix('')).toThrow(/queue prefix label/);
    expect(() => uniqueQueuePrefix('9lives')).toThrow(/queue prefix label/);
  });
});

describe('redisConnectionOptions', () => {
  test('when the URL has credentials, a database and TLS, then the options carry them', () => {
    expect(redisConnectionOptions('rediss://user:p%40ss@cache.internal:6380/3')).toEqual({
      host: 'cache.internal',
      port: 6380,
      username: 'user',
      password: 'p@ss',
      db: 3,
      tls: {},
      maxRetriesPerRequest: null,
    });
  });
});

describe('obliterateQueues', () => {
  test('when queues under a prefix hold jobs and stray keys, then every key of the prefix is gone and others stay', async () => {
    const prefix = uniqueQueuePrefix('svcq');
    const other = uniqueQueuePrefix('svcq');
    const connection = redisConnectionOptions(REDIS_URL);
    const queue = new Queue('jobs', { connection, prefix });
    const kept = new Queue('jobs', { connection, prefix: other });
    const redis = new Redis(REDIS_URL);
    try {
      await queue.add('a', { n: 1 });
      await queue.add('b', { n: 2 }, { delay: 60_000 });
      await kept.add('c', { n: 3 });
      await redis.set(`${prefix}:stray`, '1');
      await obliterateQueues(REDIS_URL, prefix, ['jobs']);
      expect(await redis.keys(`${prefix}:*`)).toEqual([]);
      expect((await redis.keys(`${other}:*`)).length).toBeGreaterThan(0);
    } finally {
      await Promise.all([queue.close(), kept.close()]);
      await obliterateQueues(REDIS_URL, other, ['jobs']);
      redis.disconnect();
    }
  });
});
