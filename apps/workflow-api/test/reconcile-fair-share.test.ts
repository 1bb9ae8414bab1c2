import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger } from '@svc/service-kit';
import { obliterateQueues, redisConnectionOptions, testRedisUrl, uniqueQueuePrefix } from '@svc/testing';
import { RECONCILE_QUEUE, createEngineQueue, fairPriorityKey } from '../src/data/reconcile.queue';
import type { EngineQueue, ReconcileJobData } from '../src/data/reconcile.queue';

/**
 * The reconcile queue's fair share between projects, on the real Redis with a real BullMQ worker: a project's
 * burst of run-starting jobs does not hold back another project's single job.
 */
jest.setTimeout(60_000);

const REDIS_URL = testRedisUrl();
const prefix = uniqueQueuePrefix('fair');
let redis: Redis;
let queue: EngineQueue;

beforeAll(() => {
  redis = new Redis(REDIS_URL);
  queue = createEngineQueue({
    connection: redisConnectionOptions(REDIS_URL),
    publisher: redis,
    prefix,
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
});

afterAll(async () => {
  await queue.close();
  await obliterateQueues(REDIS_URL, prefix, [RECONCILE_QUEUE]);
  redis.disconnect();
});

/** Runs a one-at-a-time worker over the queue until `count` jobs are done; answers their invocation ids in order. */
async function drain(count: number): Promise<string[]> {
  const order: string[] = [];
  let worker: Worker<ReconcileJobData> | undefined;
  await new Promise<void>((resolve, reject) => {
    worker = new Worker<ReconcileJobData>(
      RECONCILE_QUEUE,
      async (job) => {
        order.push(job.data.invocationId);
        if (job.data.projectId) await queue.finishedFairJob(job.data.projectId);
        if (order.length === count) resolve();
      },
      { connection: redisConnectionOptions(REDIS_URL), prefix, concurrency: 1 },
    );
    worker.on('error', reject);
  });
  await worker!.close();
  return order;
}

describe('fair share of the reconcile workers between projects', () => {
  test('when project A has enqueued a burst of launches, then project B’s launch enqueued after it is taken among the first, and a job moving a started run goes before both', async () => {
    const burst = Array.from({ length: 60 }, (_, i) => ({
      outboxId: `obx_a${i}`,
      invocationId: `inv_a${i}`,
      projectId: 'prj_a',
    }));
    expect(await queue.enqueue(burst)).toBe(true);
    expect(await queue.enqueue([{ outboxId: 'obx_b0', invocationId: 'inv_b0', projectId: 'prj_b' }])).toBe(
      true,
    );
    // A stage completion (no project): a run already started moves first.
    expect(await queue.enqueue([{ outboxId: 'obx_s0', invocationId: 'inv_s0' }])).toBe(true);
    expect(await redis.get(fairPriorityKey(prefix, 'prj_a'))).toBe('60');
    expect(await redis.get(fairPriorityKey(prefix, 'prj_b'))).toBe('1');

    const order = await drain(62);
    expect(order[0]).toBe('inv_s0');
    // B's one launch shares the first turn with A's first launch (FIFO within a priority): second or third.
    expect(order.indexOf('inv_b0')).toBeLessThanOrEqual(2);
    // A's launches keep their own order, and none is lost.
    expect(order.filter((id) => id.startsWith('inv_a'))).toEqual(burst.map((j) => j.invocationId));
    // Every finished job gave its turn back.
    expect(await redis.exists(fairPriorityKey(prefix, 'prj_a'), fairPriorityKey(prefix, 'prj_b'))).toBe(0);
  });
});
