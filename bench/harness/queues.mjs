// BullMQ as a baseline: a queue and a Worker whose processor does nothing, on the bench's Redis under a prefix
// of their own, so what a service adds on top of the queue can be told apart. Not a bench itself.
import { requireFrom, testing } from './cli.mjs';
import { redisUrl } from './stack.mjs';

/** The Workflow API's BullMQ (the version the services run). */
export const bullmq = () => requireFrom('apps/workflow-api', 'bullmq');

/** Connection options of the bench's Redis, for BullMQ. */
export const redisConnection = () => testing().redisConnectionOptions(redisUrl);

/**
 * Queue `name` under `prefix` with a no-op Worker of `concurrency` (and QueueEvents when `events`), resolved
 * once all are ready. `close()` (once, whoever asks) closes them and removes the prefix's keys.
 */
export async function noopQueue(name, { prefix, concurrency, events = false }) {
  const { Queue, QueueEvents, Worker } = bullmq();
  const connection = redisConnection();
  const queue = new Queue(name, { connection, prefix });
  const queueEvents = events ? new QueueEvents(name, { connection, prefix }) : undefined;
  const worker = new Worker(name, async () => null, { connection, prefix, concurrency });
  let closing;
  const close = () =>
    (closing ??= (async () => {
      await Promise.allSettled([worker.close(), queueEvents?.close()]);
      await queue.close();
      await testing().obliterateQueues(redisUrl, prefix, [name]);
    })());
  try {
    await Promise.all([queue.waitUntilReady(), queueEvents?.waitUntilReady(), worker.waitUntilReady()]);
  } catch (error) {
    await close();
    throw error;
  }
  return { queue, events: queueEvents, worker, close };
}
