import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
// @svc/testing depends on this package, so its test servers are read from its source, not through a dependency.
import { testRedisUrl } from '../../testing/src/servers';
import { createLogger } from './logger';
import { checkRedis, createRedis, redisConnectionOptions } from './redis';
import { startWorker } from './worker';

const REDIS_URL = testRedisUrl();
const logger = createLogger({ name: 'worker-test', level: 'silent' });

describe('BullMQ worker base', () => {
  const prefix = `svc_test_${randomBytes(4).toString('hex')}`;
  const queue = new Queue('jobs', { connection: redisConnectionOptions(REDIS_URL), prefix });

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });

  test('when a job is added, then the worker processes it once with its data', async () => {
    const seen: string[] = [];
    const worker = startWorker<{ value: string }>(
      { queue: 'jobs', processor: async (job) => void seen.push(job.data.value) },
      { connection: redisConnectionOptions(REDIS_URL), prefix, logger },
    );
    await queue.add('one', { value: 'a' }, { jobId: 'fixed-id' });
    await queue.add('one', { value: 'a-again' }, { jobId: 'fixed-id' }); // same id: ignored
    await new Promise((resolve) => worker.worker.once('completed', resolve));
    await worker.close();
    expect(seen).toEqual(['a']);
  });

  test('when the worker is closed during a job, then close waits for the job to finish', async () => {
    let finished = false;
    let started!: () => void;
    const startedPromise = new Promise<void>((resolve) => (started = resolve));
    const worker = startWorker<unknown>(
      {
        queue: 'jobs',
        processor: async () => {
          started();
          await new Promise((resolve) => setTimeout(resolve, 300));
          finished = true;
        },
      },
      { connection: redisConnectionOptions(REDIS_URL), prefix, logger },
    );
    await queue.add('slow', {});
    await startedPromise;
    await worker.close();
    expect(finished).toBe(true);
  });

  test('when Redis answers, then the readiness check passes; when closed, it fails', async () => {
    const client = createRedis(REDIS_URL);
    await new Promise((resolve) => client.once('ready', resolve));
    await expect(checkRedis(client)).resolves.toBeUndefined();
    await client.quit();
    await expect(checkRedis(client)).rejects.toThrow();
  });
});
